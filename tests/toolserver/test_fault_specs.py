"""Fault specs whose numbers no fault can mean are refused as the command line is read: a delay
of nan never ends (asyncio.sleep(nan) does not return), a call count of nan fires at every call."""

from __future__ import annotations

import pytest

from sandbox.cli import main
from toolserver.faults import FaultSpecError, parse_faults


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mirror-delay:ms=nan", "ms must be a number of milliseconds of 0 or more, not nan"),
        ("mirror-delay:ms=inf", "ms must be a number of milliseconds of 0 or more, not inf"),
        ("mirror-delay:ms=-5", "ms must be a number of milliseconds of 0 or more, not -5"),
        ("session-dies:after=nan", "after must be a whole number of calls, 0 or more, not nan"),
        ("session-dies:after=-1", "after must be a whole number of calls, 0 or more, not -1"),
        ("browser-crash:after=2.5", "after must be a whole number of calls, 0 or more, not 2.5"),
        ("browser-crash:after=inf", "after must be a whole number of calls, 0 or more, not inf"),
        ("mirror-5xx:p=nan", "p must be between 0 and 1, not nan"),
    ],
)
def test_a_fault_parameter_out_of_its_range_is_refused(spec, message):
    with pytest.raises(FaultSpecError, match=message):
        parse_faults(spec)


def test_a_plans_label_is_the_same_for_the_same_plan_and_tells_close_values_apart():
    """Attempts keep the label, and the comparison tells batches apart by it."""
    one, other = parse_faults("mirror-5xx,mirror-delay:ms=500", 3), parse_faults("mirror-delay:ms=500,mirror-5xx", 3)
    assert one is not None and other is not None
    assert one.label == other.label == "mirror-5xx:p=1,mirror-delay:ms=500:p=1 (seed 3)"
    close = [parse_faults(f"mirror-5xx:p={p}") for p in ("0.12345671", "0.12345674")]
    assert close[0] is not None and close[1] is not None and close[0].label != close[1].label
    assert close[0].label == "mirror-5xx:p=0.12345671 (seed 0)"


def test_the_edges_of_the_ranges_are_taken():
    plan = parse_faults("mirror-delay:ms=0,session-dies:after=0:p=0,browser-crash:after=3.0")
    assert plan is not None
    assert [fault.name for fault in plan.faults] == [
        "mirror-delay:ms=0:p=1",
        "session-dies:after=0:p=0",
        "browser-crash:after=3:p=1",
    ]


@pytest.mark.parametrize(
    "command",
    [
        ["run", "controlled-form", "--agent", "reference", "--no-progress", "--out"],
        ["mcp", "--trace-dir"],
        ["serve", "--port", "0", "--trace-dir"],
    ],
)
def test_every_command_that_takes_faults_refuses_one_out_of_range_with_exit_2(tmp_path, capsys, command):
    assert main([*command, str(tmp_path / "out"), "--faults", "mirror-delay:ms=nan"]) == 2
    assert "ms must be a number of milliseconds of 0 or more, not nan" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
