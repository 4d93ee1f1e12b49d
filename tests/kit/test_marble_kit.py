"""The marble kit as a test writer meets it: hot sources (``^``), failures shown as marble
strings, ``error=`` as a class or an instance on both sides."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from reactivex import operators as ops

from rxgem._pytest_plugin import pytest_assertrepr_compare
from rxgem.testing import expect_marbles, run_marbles

LOOKUP = {"a": 1, "b": 2, "c": 3}


# -- hot sources


def test_a_hot_source_is_subscribed_at_the_caret() -> None:
    output = run_marbles(ops.map(lambda x: x * 10), "-a-^-b-c-|", LOOKUP)
    # what came before the subscription is lost; times count from the caret
    assert output == expect_marbles("--x-y-|", {"x": 20, "y": 30})
    assert output.source_subscriptions == [(0, 6)]


def test_a_hot_source_s_times_and_disposal_count_from_the_caret() -> None:
    output = run_marbles(ops.take(1), "--a--^-b--c--|", LOOKUP)
    assert output == expect_marbles("--(b,|)", LOOKUP)
    assert output.source_subscriptions == [(0, 2)]
    late = run_marbles(ops.map(lambda x: x), "a-^-b-c-|", LOOKUP, dispose_at=3)
    assert late == expect_marbles("--b", LOOKUP)
    assert late.source_subscriptions == [(0, 3)]


def test_expected_marbles_may_mark_the_caret_too() -> None:
    output = run_marbles(ops.map(lambda x: x), "-a-^-b-|", LOOKUP)
    assert output == expect_marbles("   ^-b-|", LOOKUP)


def test_a_hot_source_ends_before_the_subscription_and_the_operator_never_hears() -> None:
    output = run_marbles(ops.map(lambda x: x), "-a-|-^--", LOOKUP)
    assert output == []
    assert output.source_subscriptions == [(0, None)]


def test_two_carets_are_refused() -> None:
    with pytest.raises(ValueError, match="one"):
        run_marbles(ops.map(lambda x: x), "-^-a-^-|", LOOKUP)


# -- error=: a class or an instance, on both sides


class Boom(Exception):
    pass


@pytest.mark.parametrize("given", [Boom, Boom("marble error")], ids=["class", "instance"])
def test_error_is_a_class_or_an_instance_in_run_marbles(given: type[Boom] | Boom) -> None:
    output = run_marbles(ops.map(lambda x: x), "-a-#", LOOKUP, error=given)
    assert isinstance(output.error, Boom)
    assert output == expect_marbles("-a-#", LOOKUP, error=Boom)
    assert output == expect_marbles("-a-#", LOOKUP, error=given)


# -- failures as marble strings


def explain(left: object, right: object) -> str:
    lines = pytest_assertrepr_compare(None, "==", left, right)
    assert lines is not None
    return "\n".join(lines)


def test_a_mismatch_is_shown_as_two_aligned_marble_strings() -> None:
    output = run_marbles(ops.map(lambda x: x), "-a-b-|", LOOKUP)
    text = explain(output, expect_marbles("-a---b-|", LOOKUP))
    assert "Marble(" not in text
    assert "expected: -a---b-|\nactual:   -a-b-|" in text


def test_values_not_in_the_lookup_get_a_letter_and_a_legend() -> None:
    output = run_marbles(ops.map(lambda x: x * 100), "-a-(b,c)-|", LOOKUP)
    text = explain(output, expect_marbles("-a-(b,c)-|", LOOKUP))
    assert "actual:   -A-(B,C)-|" in text
    assert "A = 100" in text
    assert "C = 300" in text


def test_an_error_is_shown_with_its_class() -> None:
    output = run_marbles(ops.map(lambda x: x), "-a-#", LOOKUP, error=Boom("bad"))
    text = explain(output, expect_marbles("-a-|", LOOKUP))
    assert "actual:   -a-#" in text
    assert "Boom('bad')" in text


def test_equal_or_foreign_comparisons_are_left_to_pytest() -> None:
    output = run_marbles(ops.map(lambda x: x), "-a-|", LOOKUP)
    assert pytest_assertrepr_compare(None, "==", output, [1]) is None
    assert pytest_assertrepr_compare(None, "!=", output, expect_marbles("-b-|", LOOKUP)) is None


def test_pytest_prints_the_marble_strings_of_a_failing_assert(tmp_path: Path) -> None:
    test = tmp_path / "test_mine.py"
    test.write_text(
        "from reactivex import operators as ops\n"
        "from rxgem.testing import expect_marbles, run_marbles\n"
        "def test_it():\n"
        "    output = run_marbles(ops.map(lambda x: x), '-a-b-|', {'a': 1, 'b': 2})\n"
        "    assert output == expect_marbles('-a--b-|', {'a': 1, 'b': 2})\n"
        "def test_drawn():\n"
        "    output = run_marbles([('twice', ops.map(lambda x: 2 * x))], '-a-|', {'a': 1})\n"
        "    assert not output.completed, output.diagram()\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "expected: -a--b-|" in run.stdout
    assert "actual:   -a-b-|" in run.stdout
    # The failure's own section; with CI set pytest repeats it in the summary.
    lanes = [line for line in run.stdout.splitlines() if "─" in line and line.startswith("E")]
    assert [line.split()[1] for line in lanes] == ["source", "twice"]
    assert all(line.endswith("|") for line in lanes)
    assert "<Diagram lanes=" not in run.stdout


def test_a_diagram_s_repr_is_its_lanes() -> None:
    output = run_marbles([("twice", ops.map(lambda x: 2 * x))], "-a-b-|", LOOKUP)
    shown = repr(output.diagram())
    assert shown.splitlines()[2:4] == [
        "source  ─1──────────────2──────────────|",
        "twice   ─1──────────────2──────────────|",
    ]
    assert "source:" not in shown  # the legend is str()'s
    assert "source:" in str(output.diagram())
