/*
 * Offline stand-in for the multi-step form demo at
 * https://sarah27h.github.io/simple-multi-step-form/ (browser-tool sandbox mirror).
 *
 * Our own vanilla code, written from the demo's documented observable behaviour
 * (steps, labels, ids, validation messages, keyboard and accessibility facts); it is not
 * the original React/Material-UI bundle. It makes no network request and stores nothing:
 * a reload starts again at step 1 with empty fields.
 *
 * Like the demo, it logs its error state with console.log on every render and every change.
 *
 * Sandbox hooks (not part of the real demo): the "Confirm & Next" button carries
 * data-sandbox-state-change="final-submit" and the step-4 container carries
 * data-sandbox-final-state="submitted".
 */
(function () {
  'use strict';

  var STEP_COUNT = 3; // the "(Step N of 3)" denominator; step 4 is the finished screen
  var FIELD_ORDER = ['name', 'email', 'city', 'bio'];

  // Per-field facts. `check` returns the error detail ('' when valid); `message` builds the
  // full text shown under the field. The misspellings are the demo's own, kept on purpose.
  var FIELDS = {
    name: {
      label: 'Name', type: 'text', errorId: 'name-error',
      check: function (value) { return value.length < 3 ? 'minimum 3 characaters required' : ''; },
      message: function (detail) { return 'Error: name require ' + detail; }
    },
    email: {
      label: 'Email', type: 'email', errorId: 'email-error',
      check: function (value) { return value.indexOf('@') === -1 ? 'contain @ required' : ''; },
      message: function (detail) { return 'Error: email require ' + detail; }
    },
    city: {
      label: 'City', type: 'text', errorId: 'city-erro', // sic: the demo's id lacks the final "r"
      wrapperInvalidFalse: true,
      check: function (value) { return value.length < 3 ? 'minimum 3 characaters required' : ''; },
      message: function (detail) { return 'Error: city require ' + detail; }
    },
    bio: {
      label: 'Bio', multiline: true, placeholder: 'Placeholder', errorId: 'bio-error',
      helperId: 'bio-helper-text', wrapperInvalidFalse: true,
      check: function (value) { return value.length >= 250 ? 'maximum 250 character required' : ''; },
      // The count is the current length, as in the demo (it is only visible while blurred).
      message: function (detail) {
        return 'Error: bio character Numbers ' + state.values.bio.length + ' and ' + detail;
      }
    }
  };

  var state = {
    step: 1,
    values: { name: '', email: '', city: '', bio: '' },
    errors: { name: '', email: '', city: '', bio: '' },
    // Result of the whole-form check run by step 2's Next; true until that check first runs.
    formValid: true
  };

  var root = document.getElementById('root');
  var mounted = {}; // field id -> {wrapper, label, input, helper, error} of the current step

  // ---- small DOM helper -------------------------------------------------------------
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === 'className') node.className = value;
      else if (key.slice(0, 2) === 'on') node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    });
    [].concat(children === undefined ? [] : children).forEach(function (child) {
      if (child !== null && child !== undefined) node.append(child);
    });
    return node;
  }

  // ---- pieces shared by the steps ---------------------------------------------------
  function appBar(title, suffix) {
    return el('header', { className: 'app-bar' }, [
      el('h1', { className: 'app-bar-title' }, [title + ' ', el('span', { className: 'app-bar-step' }, suffix)])
    ]);
  }

  function stepSuffix() {
    return '(Step ' + state.step + ' of ' + STEP_COUNT + ')';
  }

  function button(text, options) {
    return el('button', {
      className: 'btn ' + (options.primary ? 'btn-primary ' : '') + options.align,
      type: options.type || 'button',
      'data-sandbox-state-change': options.stateChange,
      onclick: options.onClick
    }, el('span', { className: 'btn-label' }, text));
  }

  function controls(buttons) {
    return el('div', { className: 'controls' }, buttons);
  }

  // ---- text fields --------------------------------------------------------------------
  function textField(id) {
    var spec = FIELDS[id];
    var input = spec.multiline
      ? el('textarea', {
          id: id, className: 'input input-multiline', rows: 1,
          placeholder: spec.placeholder, 'aria-describedby': spec.helperId
        })
      : el('input', { id: id, className: 'input', type: spec.type });
    input.value = state.values[id];
    input.addEventListener('input', onFieldInput);
    input.addEventListener('focus', onFieldFocus);
    input.addEventListener('blur', onFieldBlur);

    var label = el('label', { className: 'field-label', 'for': id, id: id + '-label' }, spec.label);
    var helper = spec.helperId ? el('p', { className: 'helper-text', id: spec.helperId }) : null;
    // As in the demo, the error paragraph is referenced from the field's wrapper, not from
    // the input itself, so it never becomes the input's accessible description.
    var wrapper = el('div', {
      className: 'text-field',
      'aria-describedby': spec.errorId,
      'aria-invalid': spec.wrapperInvalidFalse ? 'false' : null
    }, [label, el('div', { className: 'input-box' }, input), helper]);

    mounted[id] = { wrapper: wrapper, label: label, input: input, helper: helper, error: null };
    return wrapper;
  }

  // Bring one mounted field's DOM in line with the state, without re-creating the input
  // (so focus and caret stay where they are).
  function syncField(id) {
    var field = mounted[id];
    if (!field) return;
    var spec = FIELDS[id];
    var value = state.values[id];
    var error = state.errors[id];
    var focused = document.activeElement === field.input;

    field.label.setAttribute('data-shrink', String(focused || value !== ''));
    field.wrapper.classList.toggle('is-focused', focused);
    field.wrapper.classList.toggle('has-error', error !== '');
    field.input.setAttribute('aria-invalid', String(error !== ''));

    if (field.helper) {
      field.helper.textContent = 'character Numbers ' + value.length;
      field.helper.classList.toggle('is-error', error !== '');
    }
    if (spec.multiline) autoGrow(field.input);

    if (error === '') {
      if (field.error) field.error.remove();
      field.error = null;
    } else {
      if (!field.error) {
        field.error = el('p', { className: 'error-message', id: spec.errorId, 'aria-live': 'assertive' });
        field.wrapper.after(field.error);
      }
      field.error.textContent = spec.message(error);
    }
  }

  function autoGrow(textarea) {
    textarea.style.height = 'auto';
    textarea.style.height = textarea.scrollHeight + 'px';
  }

  // The demo logs its error state on every render and change (what a console reader sees).
  function logErrors() {
    console.log({ name: state.errors.name, email: state.errors.email, city: state.errors.city, bio: state.errors.bio });
  }

  function onFieldInput(event) {
    state.values[event.target.id] = event.target.value;
    syncField(event.target.id);
    logErrors();
  }

  // Focusing a field hides its error; leaving it checks the field again.
  function onFieldFocus(event) {
    state.errors[event.target.id] = '';
    syncField(event.target.id);
    logErrors();
  }

  function onFieldBlur(event) {
    var input = event.target;
    if (!input.isConnected) return; // a field removed by a step change is not re-checked
    state.errors[input.id] = FIELDS[input.id].check(input.value);
    syncField(input.id);
    logErrors();
  }

  // ---- whole-form check and navigation ----------------------------------------------------
  function checkWholeForm() {
    return FIELD_ORDER.every(function (id) {
      return state.values[id] !== '' && state.errors[id] === '';
    });
  }

  function goToStep(step) {
    state.step = step;
    render();
  }

  // ---- the four screens ---------------------------------------------------------------------
  function userDetailsStep() {
    return [
      appBar('Enter User Details', stepSuffix()),
      textField('name'),
      textField('email'),
      controls([
        button('Next', { primary: true, align: 'align-end', onClick: function () { goToStep(2); } })
      ])
    ];
  }

  function personalDetailsStep() {
    return [
      appBar('Enter Personal Details', stepSuffix()),
      textField('city'),
      textField('bio'),
      controls([
        button('Back', { align: 'align-start', onClick: function () { goToStep(1); } }),
        // Next always advances and, at the same time, runs the whole-form check.
        button('Next', {
          primary: true, align: 'align-end',
          onClick: function () { state.formValid = checkWholeForm(); goToStep(3); }
        })
      ])
    ];
  }

  function confirmStep() {
    var items = FIELD_ORDER.map(function (id) {
      return el('li', { className: 'summary-item' }, el('div', { className: 'summary-text' }, [
        el('span', { className: 'summary-key' }, id),
        el('p', { className: 'summary-value' }, state.values[id])
      ]));
    });
    return [
      appBar('Confirm', stepSuffix()),
      el('div', { className: 'summary' }, el('ul', { className: 'summary-list' }, items)),
      state.formValid ? null : el('div', { className: 'message' }, el('h2', {
        className: 'error-message form-alert', role: 'alert'
      }, 'Errors! - There are errors in this form, please go back to fix them')),
      controls([
        button('Back', { align: 'align-start', onClick: function () { goToStep(2); } }),
        // type=submit with no form around it: only this click handler acts.
        button('Confirm & Next', {
          primary: true, align: 'align-end', type: 'submit', stateChange: 'final-submit',
          onClick: function (event) {
            event.preventDefault();
            if (state.formValid) goToStep(4);
          }
        })
      ])
    ];
  }

  function successStep() {
    return [
      appBar('Success', '(Finished)'),
      el('div', { className: 'message' }, [
        el('h2', { className: 'success-title' }, 'Thank you for your submission!'),
        el('h2', { className: 'success-note' }, 'you will get an email with further instructions')
      ])
    ];
  }

  var SCREENS = { 1: userDetailsStep, 2: personalDetailsStep, 3: confirmStep, 4: successStep };

  // A step change replaces the whole screen; the clicked button goes away with it, so
  // nothing is focused afterwards (the demo does not move focus either).
  function render() {
    mounted = {};
    var screen = el('div', {
      className: 'step',
      'data-sandbox-final-state': state.step === 4 ? 'submitted' : null
    }, SCREENS[state.step]());
    root.replaceChildren(screen);
    Object.keys(mounted).forEach(syncField);
    logErrors();
  }

  render();
})();
