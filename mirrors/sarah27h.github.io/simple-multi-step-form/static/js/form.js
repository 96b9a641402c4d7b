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
 * The DOM follows the structure of the demo's GitHub Pages build (read from its public
 * gh-pages branch, not copied): each screen's nodes sit directly under #root (no wrapper), the
 * elements carry Material-UI v4's class names (Mui*) besides our own, the step counter is an
 * unclassed <span> whose text is three text nodes ("(Step ", "1", " of 3)") as React renders
 * them, each button holds a label span and a ripple span, and the multiline Bio field has
 * a hidden twin textarea (Material-UI's autosize measurer).
 *
 * Sandbox hooks (not part of the real demo): the "Confirm & Next" button carries
 * data-sandbox-state-change="final-submit" and the step-4 message container carries
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
    return el('header', {
      className: 'MuiPaper-root MuiAppBar-root MuiAppBar-positionStatic MuiAppBar-colorPrimary MuiPaper-elevation4 app-bar'
    }, [
      el('h1', { className: 'MuiTypography-root MuiTypography-h1 MuiTypography-alignCenter app-bar-title' },
        [title + ' ', el('span', {}, suffix)])
    ]);
  }

  // "(Step 1 of 3)" as three text nodes, the way React renders "(Step ", {step}, " of 3)".
  function stepSuffix() {
    return ['(Step ', String(state.step), ' of ' + STEP_COUNT + ')'];
  }

  function button(text, options) {
    return el('button', {
      className: 'MuiButtonBase-root MuiButton-root MuiButton-contained ' +
        (options.primary ? 'MuiButton-containedPrimary btn-primary ' : '') + 'btn ' + options.align,
      tabindex: '0',
      type: options.type || 'button',
      'data-sandbox-state-change': options.stateChange,
      onclick: options.onClick
    }, [el('span', { className: 'MuiButton-label btn-label' }, text), el('span', { className: 'MuiTouchRipple-root' })]);
  }

  function controls(buttons) {
    return el('div', { className: 'controls' }, buttons);
  }

  // ---- text fields --------------------------------------------------------------------
  function textField(id) {
    var spec = FIELDS[id];
    var inputClass = 'MuiInputBase-input MuiInput-input' +
      (spec.multiline ? ' MuiInputBase-inputMultiline MuiInput-inputMultiline input input-multiline' : ' input');
    var input = spec.multiline
      ? el('textarea', {
          id: id, className: inputClass, rows: 1,
          placeholder: spec.placeholder, 'aria-describedby': spec.helperId
        })
      : el('input', { id: id, className: inputClass, type: spec.type });
    input.value = state.values[id];
    input.addEventListener('input', onFieldInput);
    input.addEventListener('focus', onFieldFocus);
    input.addEventListener('blur', onFieldBlur);

    var label = el('label', {
      className: 'MuiFormLabel-root MuiInputLabel-root MuiInputLabel-formControl MuiInputLabel-animated field-label',
      'for': id, id: id + '-label'
    }, spec.label);
    var helper = spec.helperId ? el('p', { className: 'MuiFormHelperText-root helper-text', id: spec.helperId }) : null;
    // Material-UI's multiline field measures its height with a hidden, read-only twin textarea.
    var twin = spec.multiline ? el('textarea', {
      'aria-hidden': 'true', className: 'MuiInputBase-input MuiInput-input MuiInputBase-inputMultiline ' +
        'MuiInput-inputMultiline input-measure', readonly: true, tabindex: '-1'
    }) : null;
    var box = el('div', {
      className: 'MuiInputBase-root MuiInput-root MuiInput-underline MuiInputBase-fullWidth MuiInput-fullWidth ' +
        'MuiInputBase-formControl MuiInput-formControl' +
        (spec.multiline ? ' MuiInputBase-multiline MuiInput-multiline' : '') + ' input-box'
    }, [input, twin]);
    // As in the demo, the error paragraph is referenced from the field's wrapper, not from
    // the input itself, so it never becomes the input's accessible description.
    var wrapper = el('div', {
      className: 'MuiFormControl-root MuiTextField-root MuiFormControl-marginNormal MuiFormControl-fullWidth text-field',
      'aria-describedby': spec.errorId,
      'aria-invalid': spec.wrapperInvalidFalse ? 'false' : null
    }, [label, box, helper]);

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
    field.label.classList.toggle('Mui-focused', focused);
    field.label.classList.toggle('Mui-error', error !== '');
    field.input.setAttribute('aria-invalid', String(error !== ''));

    if (field.helper) {
      field.helper.textContent = 'character Numbers ' + value.length;
      field.helper.classList.toggle('is-error', error !== '');
      field.helper.classList.toggle('Mui-error', error !== '');
    }
    if (spec.multiline) autoGrow(field.input);

    if (error === '') {
      if (field.error) field.error.remove();
      field.error = null;
    } else {
      if (!field.error) {
        field.error = el('p', {
          className: 'MuiTypography-root MuiTypography-body2 MuiTypography-alignCenter error-message',
          id: spec.errorId, 'aria-live': 'assertive'
        });
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
      return el('li', { className: 'MuiListItem-root MuiListItem-gutters summary-item' }, el('div', {
        className: 'MuiListItemText-root listText MuiListItemText-multiline summary-text'
      }, [
        el('span', {
          className: 'MuiTypography-root MuiListItemText-primary MuiTypography-body1 MuiTypography-displayBlock summary-key'
        }, id),
        el('p', {
          className: 'MuiTypography-root MuiListItemText-secondary MuiTypography-body2 ' +
            'MuiTypography-colorTextSecondary MuiTypography-displayBlock summary-value'
        }, state.values[id])
      ]));
    });
    return [
      appBar('Confirm', stepSuffix()),
      el('div', { className: 'summary' }, el('ul', { className: 'MuiList-root MuiList-padding summary-list' }, items)),
      state.formValid ? null : el('div', { className: 'message' }, el('h2', {
        className: 'MuiTypography-root MuiTypography-h2 MuiTypography-alignCenter error-message form-alert', role: 'alert'
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
      el('div', { className: 'message', 'data-sandbox-final-state': 'submitted' }, [
        el('h2', { className: 'MuiTypography-root MuiTypography-h2 MuiTypography-alignCenter success-title' },
          'Thank you for your submission!'),
        el('h2', { className: 'MuiTypography-root MuiTypography-h2 MuiTypography-alignCenter success-note' },
          'you will get an email with further instructions')
      ])
    ];
  }

  var SCREENS = { 1: userDetailsStep, 2: personalDetailsStep, 3: confirmStep, 4: successStep };

  // A step change replaces the whole screen (its nodes go straight under #root, as React's
  // fragment puts them); the clicked button goes away with it, so nothing is focused afterwards
  // (the demo does not move focus either).
  function render() {
    mounted = {};
    root.replaceChildren.apply(root, SCREENS[state.step]().filter(function (node) { return node; }));
    Object.keys(mounted).forEach(syncField);
    logErrors();
  }

  render();
})();
