"""JUnit XML of a batch, so CI systems show agent regressions like test failures.

One ``<testsuite>`` per batch, one ``<testcase name="<pack>[<agent>#<n>]">`` per attempt; an
attempt that did not qualify has a ``<failure>`` whose message is the reason (the same line
``sandbox run`` prints) and whose text is the attempt's ``score.txt``. An attempt whose
evaluation raised (status ``evaluation_error``) has an ``<error>`` instead, as a test that
raised does: it was not judged. The Ant/Jenkins JUnit format: the attributes CI parsers require
(tests, failures, errors, time, timestamp, hostname; name, classname) are always present. A test
case's ``time`` is its attempt's measured time, left out when that is unknown (an unfinished or
unreadable folder, an attempt the sandbox could not run): ``time`` is optional on a test case in
Jenkins' JUnit schema, and a written 0 would read as measured. The suite's time sums the known ones.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from sandbox.runner.attempt import EVALUATION_ERROR, time_known
from sandbox.runner.files import folder_file, rerun_of, write_file
from sandbox.runner.folders import AttemptFolder, read_summary

# Characters XML 1.0 does not allow (C0 controls but tab, newline and return; lone surrogates;
# U+FFFE, U+FFFF): an agent's stderr with ANSI colours made the document not well-formed.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with each character XML cannot hold written as its escape (``\\x1b``)."""
    return NOT_XML.sub(lambda found: found.group().encode("unicode_escape", "backslashreplace").decode(), text)


def _number(folder: AttemptFolder) -> str:
    """The attempt's number, and for a re-run (``<folder>-r<k>``) which: each case's name is its own."""
    rerun = rerun_of(folder.name)
    attempt = folder.attempt.attempt if folder.attempt else None
    number = str(attempt) if attempt is not None else (rerun[0] if rerun else folder.name).rsplit("-", 1)[-1]
    return f"{number} re-run {rerun[1]}" if rerun else number


def _score_text(folder: AttemptFolder) -> str:
    """The attempt's ``score.txt``; its reasons when it has none (or one that cannot be read, said)."""
    score_txt, _ = folder_file(folder.path, "score.txt")  # a link out of the folder is not read
    if score_txt is None:
        return "\n".join(folder.reasons())
    try:
        return score_txt.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return "\n".join([f"score.txt is unreadable ({exc.strerror or exc})", *folder.reasons()])


def _start(folder: AttemptFolder) -> datetime | None:
    """When the attempt started, in UTC (a time without a zone taken as UTC, as the record writes
    them); None when its record gives none that can be one (an edited ``0001-01-01T00:00:00+05:00``
    is before the first UTC time)."""
    started_at = folder.attempt.started_at if folder.attempt else None
    if not started_at:
        return None
    try:
        started = datetime.fromisoformat(started_at)
        return started.astimezone(UTC) if started.tzinfo is not None else started.replace(tzinfo=UTC)
    except (ValueError, OverflowError):
        return None


def junit_xml(batch_dir: Path) -> str:
    """The batch (or single attempt) folder's results as JUnit XML text."""
    batch_dir = Path(batch_dir)
    data = read_summary(batch_dir)
    cases, failures, errors, skipped, total_time, starts = [], 0, 0, 0, 0.0, []
    for entry in data["attempts"]:
        directory = Path(entry["directory"])
        folder = AttemptFolder.load(directory if directory.is_dir() else batch_dir / directory.name)
        known = time_known(str(entry["status"]), entry["elapsed_seconds"])
        seconds = float(entry["elapsed_seconds"]) if known else 0.0
        if (started := _start(folder)) is not None:
            starts.append(started)
        total_time += seconds
        case = ET.Element(
            "testcase",
            name=xml_text(f"{entry['pack']}[{entry['agent'] or ''}#{_number(folder)}]"),  # None: a damaged one
            classname=xml_text(f"sandbox.{entry['pack']}"),  # a damaged one's pack: its folder's name
        )
        if known:  # unknown: no time, not a measured 0
            case.set("time", f"{seconds:.3f}")
        if entry.get("selection") == "replaced":  # run selection left it out: its re-run counts instead
            skipped += 1
            said = f"replaced by a re-run: interrupted ({entry.get('interruption') or 'no reason recorded'})"
            ET.SubElement(case, "skipped", message=xml_text(said))
        elif not entry["qualified_pass"]:
            raised = entry["status"] == EVALUATION_ERROR  # as the batch page and `sandbox results` count it
            if raised:
                errors += 1
            else:
                failures += 1
            failure = ET.SubElement(
                case,
                "error" if raised else "failure",
                message=xml_text(entry.get("reason") or "not a qualified pass"),
                type=EVALUATION_ERROR if raised else xml_text(f"not_qualified ({entry['status']})"),
            )
            text = _score_text(folder)
            for problem in (folder.trace_problem, folder.record_problem):  # score.txt may call it a pass
                if problem and problem not in text:
                    text = f"{problem}\n\n{text}"
            failure.text = xml_text(text)
        cases.append(case)
    started = min(starts, default=datetime.now(UTC))
    root = ET.Element(
        "testsuites",
        name="sandbox",
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        time=f"{total_time:.3f}",
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=xml_text(batch_dir.resolve().name),
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{total_time:.3f}",
        timestamp=started.replace(tzinfo=None).isoformat(timespec="seconds"),  # UTC; the format has no zone
        hostname=socket.gethostname() or "localhost",
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="batch", value=xml_text(str(batch_dir)))
    suite.extend(cases)
    ET.SubElement(suite, "system-out").text = ""
    ET.SubElement(suite, "system-err").text = ""
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(batch_dir: Path, file: Path) -> Path:
    file = Path(file)
    file.parent.mkdir(parents=True, exist_ok=True)
    write_file(file, junit_xml(batch_dir))
    return file
