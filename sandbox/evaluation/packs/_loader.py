"""``load_pack``: read one pack folder into a ``Pack``, checking every file; anything wrong is
a ``PackError`` naming the file and the field."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from sandbox.evaluation.packs._errors import PackError
from sandbox.evaluation.packs._models import Card, GatesSpec, Rules
from sandbox.evaluation.packs._pack import SITE_KEY_TOKEN, Pack
from sandbox.evaluation.records import KeyCounter, NotJson, json_depth, pointer_part, read_json, record_value
from sandbox.evaluation.rules import expected_problem
from sandbox.paths import PACKS_DIR

MAX_JSON_DEPTH = 64  # the deepest pack file here is 9 levels; deeper only risks recursion limits
MAX_SCHEMA_NODES = 10_000  # the schema with its references followed; the largest bundled one has 479 nodes
PACK_FILES = (
    "card.json",
    "task_prompt.md",
    "runner_prompt.md",
    "input.md",
    "output.schema.json",
    "expected.json",
    "rules.json",
    "gates.json",
)


def resolve_pack_dir(ref: str | Path, packs_dir: Path | None = None) -> Path:
    """The folder of a pack id (in ``packs_dir``, default ``packs/``) or a folder path as given (a
    path: ``./my-pack``, ``packs/my-pack``; a bare name is an id first; ``.`` and ``..`` are made
    absolute, so that the folder has a name)."""
    path = Path(ref)
    # "./my-pack" is a path (its Path's parts are those of "my-pack", the id of a bundled pack).
    if isinstance(ref, str) and len(path.parts) == 1 and not path.is_absolute() and not ref.startswith((".", "~")):
        candidate = (packs_dir or PACKS_DIR) / ref
        if candidate.is_dir() or not path.is_dir():
            return candidate
    if path.name in ("", ".."):  # "." or "..": the folder's own name is its pack id, its parent holds its scoring pack
        return Path(os.path.abspath(path))
    return path


def pack_dirs(packs_dir: Path) -> list[Path]:
    """The pack folders (those holding a card.json) in ``packs_dir``, sorted by name."""
    if not packs_dir.is_dir():
        return []
    return sorted(p for p in packs_dir.iterdir() if p.is_dir() and (p / "card.json").is_file())


def no_such_pack(directory: Path) -> str:
    """What to say of a pack folder that is not there: the packs beside it (or the bundled ones,
    when none is), and the nearest name."""
    here = [p.name for p in pack_dirs(directory.parent)]
    known = here or [p.name for p in pack_dirs(PACKS_DIR)]
    where = f"packs here: {', '.join(here)}" if here else f"the bundled packs: {', '.join(known)}"
    near = difflib.get_close_matches(directory.name, known, 1, cutoff=0.7)
    hint = f"; did you mean {near[0]}?" if near else ""
    return f"no such pack folder{hint} ({where}; a pack of your own is named by its folder's path)"


def load_pack(ref: str | Path, *, packs_dir: Path | None = None, require_fixtures: bool = False) -> Pack:
    """Load a pack by id (from ``packs_dir``, default ``packs/``) or by folder path. A historical
    pack is loaded with its workflow's reviewed pack (a sibling folder), which scores it."""
    return _load(resolve_pack_dir(ref, packs_dir), require_fixtures=require_fixtures)


def _load(directory: Path, *, require_fixtures: bool, scoring_for: tuple[Path, Card] | None = None) -> Pack:
    """``scoring_for``: the historical pack's folder and card when this is loaded as its scoring pack."""
    if not directory.is_dir():
        raise PackError(directory, None, no_such_pack(directory))
    card: Card = _validate(Card, directory / "card.json")
    if card.pack_id != directory.name:
        raise PackError(
            directory / "card.json", "pack_id", f"{card.pack_id!r} does not match the folder name {directory.name!r}"
        )
    if card.reviewed != (card.scoring_pack == card.pack_id):
        raise PackError(
            directory / "card.json",
            "scoring_pack",
            "a reviewed pack scores itself; a historical pack names its workflow's reviewed pack",
        )
    if scoring_for is not None:  # checked first: a historical pack never loads a second one
        historical, historical_card = scoring_for
        if not card.reviewed or card.workflow != historical_card.workflow:
            raise PackError(
                historical / "card.json",
                "scoring_pack",
                f"{card.pack_id} is not the reviewed pack of workflow {historical_card.workflow}",
            )
    gates: GatesSpec = _validate(GatesSpec, directory / "gates.json")
    rules: Rules = _validate(Rules, directory / "rules.json")
    if rules.record_key != card.record_key:
        raise PackError(
            directory / "card.json",
            "record_key",
            f"{card.record_key!r} differs from rules.json record_key {rules.record_key!r}",
        )
    schema_text = _read_text(directory / "output.schema.json")
    schema = _parse_json(schema_text, directory / "output.schema.json")
    _check_schema(schema, directory / "output.schema.json")
    expected = _read_json(directory / "expected.json")
    if not (isinstance(expected, list) and expected and all(isinstance(r, dict) for r in expected)):
        raise PackError(directory / "expected.json", None, "must be a non-empty JSON array of records")
    runner_prompt = _read_text(directory / "runner_prompt.md")
    if runner_prompt.count(SITE_KEY_TOKEN) != 1:
        raise PackError(
            directory / "runner_prompt.md", None, f"must contain the site-key placeholder {SITE_KEY_TOKEN} exactly once"
        )
    reviewed = None
    if not card.reviewed:
        reviewed = _load(directory.parent / card.scoring_pack, require_fixtures=False, scoring_for=(directory, card))
    pack = Pack(
        dir=directory,
        card=card,
        gates=gates,
        rules=rules,
        output_schema=schema,
        schema_text=schema_text,
        expected=expected,
        input_text=_read_text(directory / "input.md"),
        task_prompt=_read_text(directory / "task_prompt.md"),
        runner_prompt=runner_prompt,
        reviewed_pack=reviewed,
    )
    _check_rule_fields(pack)
    _check_expected(pack)
    _check_expected_against_schema(pack)
    _check_evidence_urls(pack)
    if require_fixtures:
        for name, source in rules.evidence_sources.items():
            problem = pack.fixture_problem(name)
            if problem:
                raise PackError(directory / source.path, f"rules.json evidence_sources.{name}.path", problem)
    return pack


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PackError(path, None, "file is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(path, None, f"unreadable ({exc})") from exc


def _parse_json(text: str, path: Path) -> Any:
    """``text`` read as RFC 8259 JSON (as an agent's output is): anything else, a key repeated in
    one object, or nesting past ``MAX_JSON_DEPTH`` is a ``PackError``."""
    keys = KeyCounter()
    try:
        data = read_json(text, keys)
    except json.JSONDecodeError as exc:
        raise PackError(path, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from exc
    except NotJson as exc:
        raise PackError(path, None, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise PackError(path, None, f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # any other value Python's reader refuses
        raise PackError(path, None, f"invalid JSON: {exc}") from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise PackError(path, None, f"nested deeper than {MAX_JSON_DEPTH} levels")
    repeated = keys.paths(data, ".")
    if repeated:
        where, key = repeated[0]
        raise PackError(
            path,
            key if where == "(root)" else f"{where}.{key}",
            f"key {json.dumps(key)} appears more than once in one object (a JSON reader keeps only the last); "
            "give each key once",
        )
    return data


def _read_json(path: Path) -> Any:
    return _parse_json(_read_text(path), path)


def _validate(model: type[BaseModel], path: Path) -> Any:
    """The file as ``model``, its JSON types kept as they are (``"300"`` is no number)."""
    text = _read_text(path)
    _parse_json(text, path)  # JSON errors said as such, with their line
    try:
        return model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        more = f" (and {exc.error_count() - 1} more errors)" if exc.error_count() > 1 else ""
        raise PackError(path, field, f"{first['msg']}{more}") from None


_CHECKED_SCHEMAS: set[str] = set()  # digests of schemas already checked in this process


def _check_schema(schema: Any, path: Path) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        raise PackError(path, None, "schema must be a JSON object")
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
    if digest in _CHECKED_SCHEMAS:  # the metaschema check costs ~30 ms; packs share schemas
        return
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise PackError(path, ".".join(str(p) for p in exc.absolute_path) or None, exc.message) from None
    for where, _ in _refs(schema, (), ("$id",)):
        if where != "$id":  # a nested $id starts a new base URI: its $refs would mean something else
            raise PackError(
                path,
                where,
                "$id below the schema's root is not supported (its $refs would resolve against it, not this "
                "file); remove it, or give the schema one $id at its root",
            )
    anchors = {value for key, value in _refs(schema, (), ("$anchor", "$dynamicAnchor"))}
    for where, ref in _refs(schema, ()):
        if not ref.startswith("#"):  # another document: fetching it would use the network
            raise PackError(path, where, f"$ref {ref!r} is not a reference within this schema (#/... or #anchor)")
        found = _pointed(schema, ref) if ref == "#" or ref.startswith("#/") else (ref[1:] in anchors or None)
        if found is None:
            raise PackError(path, where, f"$ref {ref!r} points nowhere in this schema")
    cycle = _ref_cycle(schema)
    if cycle:
        where = next(where for where, ref in _refs(schema, ()) if ref == cycle[0])
        raise PackError(
            path,
            where,
            f"$ref cycle {' -> '.join(cycle)}: each refers to the next without descending into the value "
            "(only through allOf, anyOf, oneOf, not, if/then/else or $ref), so validating would never end; "
            "a recursive schema must recur through properties or items",
        )
    if not _within_node_budget(schema):
        raise PackError(
            path,
            None,
            f"the schema with its $refs followed has more than {MAX_SCHEMA_NODES:,} nodes (a $ref chain that "
            "refers to the next step several times grows exponentially); validating outputs against it "
            "would not end in time",
        )
    _CHECKED_SCHEMAS.add(digest)


# Keywords that apply a subschema to the same value: a $ref reached again through these alone
# recurs without end (keywords that descend into a property or item end with the value).
_IN_PLACE = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas"})


def _ref_cycle(schema: dict[str, Any]) -> list[str] | None:
    """A chain of references, the first repeated at its end, that applies to one value without end
    (``#/$defs/l1 -> #/$defs/l2 -> #/$defs/l1`` through allOf), or None."""
    anchors = {
        value: node
        for node in _nodes(schema)
        for key in ("$anchor", "$dynamicAnchor")
        if isinstance(value := node.get(key), str)
    }

    def target(ref: str) -> Any:
        return _pointed(schema, ref) if ref == "#" or ref.startswith("#/") else anchors.get(ref[1:])

    def in_place_refs(node: Any) -> list[str]:
        found, stack = [], [node]
        while stack:
            node = stack.pop()
            if not isinstance(node, dict):
                continue
            for key, value in node.items():
                if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                    found.append(value)
                elif key in ("allOf", "anyOf", "oneOf") and isinstance(value, list):
                    stack.extend(value)
                elif key == "dependentSchemas" and isinstance(value, dict):
                    stack.extend(value.values())
                elif key in _IN_PLACE:
                    stack.append(value)
        return found

    following: dict[str, list[str]] = {}
    done: set[str] = set()
    for start in dict.fromkeys(ref for _, ref in _refs(schema, ())):  # in the order written: one cycle said
        path: list[str] = []
        stack: list[tuple[str, int]] = [(start, 0)]  # a depth-first walk without recursion
        while stack:
            ref, depth = stack.pop()
            done.update(path[depth:])  # each walked to its end: no cycle from there
            del path[depth:]
            if ref in path:
                return [*path[path.index(ref) :], ref]
            if ref in done:
                continue
            path.append(ref)
            if ref not in following:
                following[ref] = in_place_refs(target(ref))
            if not following[ref]:
                done.add(ref)
            stack.extend((after, depth + 1) for after in following[ref])
        done.update(path)
    return None


def _within_node_budget(schema: dict[str, Any]) -> bool:
    """Whether the schema, every local reference followed (one already being followed is left:
    recursion), has at most ``MAX_SCHEMA_NODES`` nodes: the most a validator walks per value, and
    what the scorer inlines. Stops counting past the budget, so a hostile schema costs little."""
    anchors = {
        value: node
        for node in _nodes(schema)
        for key in ("$anchor", "$dynamicAnchor")
        if isinstance(value := node.get(key), str)
    }
    count = 0
    stack: list[tuple[Any, frozenset[str]]] = [(schema, frozenset())]
    while stack:
        node, active = stack.pop()
        count += 1
        if count > MAX_SCHEMA_NODES:
            return False
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                    if value not in active:
                        local = value == "#" or value.startswith("#/")
                        target = _pointed(schema, value) if local else anchors.get(value[1:])
                        if target is not None:
                            stack.append((target, active | {value}))
                else:
                    stack.append((value, active))
        elif isinstance(node, list):
            stack.extend((value, active) for value in node)
    return True


def _nodes(schema: Any) -> Iterator[dict[str, Any]]:
    """Every object in the schema, without recursion."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _refs(node: Any, at: tuple[str, ...], keys: tuple[str, ...] = ("$ref", "$dynamicRef")) -> Iterator[tuple[str, str]]:
    """Every value of ``keys`` (references) in the schema, with where it is (dotted)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys and isinstance(value, str):
                yield ".".join((*at, key)), value
            else:
                yield from _refs(value, (*at, str(key)), keys)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _refs(value, (*at, str(index)), keys)


def _pointed(schema: dict[str, Any], ref: str) -> Any:
    """What the local reference ``ref`` (``#/a/b``; JSON Pointer, percent-encoded as a URI
    fragment) points to in ``schema``, or None where it points nowhere."""
    target: Any = schema
    for part in ref[2:].split("/") if ref != "#" else ():
        part = pointer_part(part)
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def _check_expected(pack: Pack) -> None:
    """Every rule must find a valid expected value (a wrong expected record is a pack error)."""
    path = pack.dir / "expected.json"
    keys = set()
    for index, record in enumerate(pack.expected):
        for rule in pack.rules.field_rules:
            problem = expected_problem(rule, record)
            if problem:
                raise PackError(path, f"{index}.{rule.name}", problem)
        keys.add(json.dumps(record_value(record, pack.rules.record_key), sort_keys=True))
    if len(keys) != len(pack.expected):
        raise PackError(path, pack.rules.record_key, "expected records must have distinct record keys")


def _resolve(schema: dict[str, Any], node: Any) -> Any:
    """``node`` with a local ``$ref`` (``#/...``) followed, as often as it takes."""
    seen: set[str] = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        ref = node["$ref"]
        if ref in seen:
            return node
        seen.add(ref)
        target = _pointed(schema, ref)
        if target is None:
            return {}  # a dangling reference: refused when the schema is checked
        node = target
    return node


def _schema_refusal(schema: dict[str, Any], dotted: str) -> str | None:
    """Why the output schema cannot hold a record field at ``dotted`` (None when it can, or when
    the schema does not say: a subschema combining others is not followed)."""
    node = _resolve(schema, schema.get("items"))
    walked: list[str] = []
    for part in dotted.split("."):
        if not isinstance(node, dict) or any(k in node for k in ("anyOf", "oneOf", "allOf", "if")):
            return None
        where = ".".join(walked) or "the record"
        declared = node.get("type")
        if isinstance(declared, str) and declared != "object":
            return f"{where} is of type {declared!r}, which has no field {part!r}"
        declared_properties = node.get("properties")
        properties: dict[str, Any] = declared_properties if isinstance(declared_properties, dict) else {}
        if part in properties:
            node = _resolve(schema, properties[part])
        elif node.get("additionalProperties") is False and not node.get("patternProperties"):
            return f"{where} allows only {', '.join(sorted(properties)) or 'no fields'} (additionalProperties false)"
        else:
            return None
        walked.append(part)
    return None


def _check_rule_fields(pack: Pack) -> None:
    """Every field rule names a field the output schema allows: a rule for a forbidden field
    would fail every valid output."""
    for index, rule in enumerate(pack.rules.field_rules):
        refusal = _schema_refusal(pack.output_schema, rule.name)
        if refusal:
            raise PackError(
                pack.dir / "rules.json",
                f"field_rules.{index}.name",
                f"{rule.name!r} is a field output.schema.json does not allow: {refusal}",
            )


def _check_expected_against_schema(pack: Pack) -> None:
    """The expected records are valid outputs, but for fields no rule compares (evidence):
    an expected value no valid output may hold (wrong type, value outside the schema's enum)
    would fail every agent."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import UnknownType
    from referencing.exceptions import Unresolvable

    validator = Draft202012Validator(pack.output_schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    # "required" is left out: a required field with a rule is checked by _check_expected, and
    # one without a rule (evidence) is not part of an expected record.
    try:
        errors = [e for e in validator.iter_errors(pack.expected) if e.validator != "required"]
    except (Unresolvable, UnknownType, RecursionError) as exc:  # what _check_schema did not foresee
        said = "its references recur without end" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
        said = f"{said[:160]}…" if len(said) > 160 else said  # a reference error quotes the whole schema
        raise PackError(
            pack.dir / "output.schema.json", None, f"cannot validate the expected records against it: {said}"
        ) from None
    if errors:
        first = min(errors, key=lambda e: [str(p) for p in e.absolute_path])
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        raise PackError(
            pack.dir / "expected.json",
            ".".join(str(p) for p in first.absolute_path) or None,
            f"violates output.schema.json: {first.message}{more}",
        )


def _check_evidence_urls(pack: Pack) -> None:
    """Every evidence source's URL is one the run may open (gates.json allowed_urls; only a
    #fragment may differ), or no citation of it could come from the run."""
    allowed = {url.split("#", 1)[0] for url in pack.gates.allowed_urls}
    for name, source in pack.rules.evidence_sources.items():
        if source.url.split("#", 1)[0] not in allowed:
            raise PackError(
                pack.dir / "rules.json",
                f"evidence_sources.{name}.url",
                f"{source.url!r} is not one of gates.json allowed_urls ({'; '.join(pack.gates.allowed_urls)})",
            )
