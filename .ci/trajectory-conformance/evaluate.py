"""Judges every trajectory of fixtures/conformance/trajectory/cases.json with the real
trajectory evaluators of agentevals and google-adk (pinned in requirements.txt), and
writes their verdicts to verdicts.json beside it, or with --check fails when that file
no longer says what the evaluators say.

Prill's side is crates/prill-check/tests/checks/trajectory_conformance.rs, which reads
the same cases and the verdicts written here and fails on any difference that
deviations.tsv does not list.

    python .ci/trajectory-conformance/evaluate.py           # write verdicts.json
    python .ci/trajectory-conformance/evaluate.py --check   # CI: fail on drift
"""

import argparse
import importlib.metadata
import json
import os
import sys
from pathlib import Path

# Nothing leaves the machine: no LangSmith tracing of the evaluators' runs.
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

from agentevals.trajectory.match import create_trajectory_match_evaluator  # noqa: E402
from google.adk.evaluation.eval_case import IntermediateData, Invocation  # noqa: E402
from google.adk.evaluation.eval_metrics import (  # noqa: E402
    EvalMetric,
    ToolTrajectoryCriterion,
)
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator  # noqa: E402
from google.genai import types  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "conformance" / "trajectory"
AGENTEVALS_MODES = ["strict", "unordered", "subset", "superset"]
AGENTEVALS_ARGS = ["exact", "ignore", "subset", "superset"]
ADK_MATCH_TYPES = ["EXACT", "IN_ORDER", "ANY_ORDER"]

# The per-tool matchers a case may name (`agentevals_overrides`); agentevals takes a
# function, which JSON cannot hold.
OVERRIDES = {
    "city-ignoring-case": lambda out, ref: out["city"].lower() == ref["city"].lower(),
}


def messages(side):
    """A case's side as OpenAI chat messages: as written, or built from a list of calls."""
    if side and "role" in side[0]:
        return side
    built = [{"role": "user", "content": "Go."}]
    for i, call in enumerate(side):
        built.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": json.dumps(call["args"]),
                        },
                    }
                ],
            }
        )
        built.append({"role": "tool", "tool_call_id": f"call_{i}", "content": "ok"})
    built.append({"role": "assistant", "content": "Done."})
    return built


def calls(side):
    """Every tool call of a side, in order, as (name, arguments)."""
    found = []
    for message in messages(side):
        for call in message.get("tool_calls") or []:
            found.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
    return found


def agentevals_verdicts(case):
    overrides = {
        tool: OVERRIDES[name] for tool, name in case.get("agentevals_overrides", {}).items()
    }
    verdicts = {}
    for mode in AGENTEVALS_MODES:
        for args in AGENTEVALS_ARGS:
            evaluator = create_trajectory_match_evaluator(
                trajectory_match_mode=mode,
                tool_args_match_mode=args,
                tool_args_match_overrides=overrides or None,
            )
            result = evaluator(
                outputs=messages(case["actual"]), reference_outputs=messages(case["expected"])
            )
            verdicts[f"agentevals {mode} {args}"] = bool(result["score"])
    return verdicts


def invocation(side):
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="Go.")]),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=name, args=args) for name, args in calls(side)]
        ),
    )


def adk_verdicts(case):
    verdicts = {}
    for match_type in ADK_MATCH_TYPES:
        for ignore_args in (False, True):
            criterion = ToolTrajectoryCriterion(
                threshold=1.0,
                match_type=ToolTrajectoryCriterion.MatchType[match_type],
                ignore_args=ignore_args,
            )
            evaluator = TrajectoryEvaluator(
                eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", criterion=criterion)
            )
            result = evaluator.evaluate_invocations(
                actual_invocations=[invocation(case["actual"])],
                expected_invocations=[invocation(case["expected"])],
            )
            key = f"adk {match_type}" + (" ignore_args" if ignore_args else "")
            verdicts[key] = result.overall_eval_status.name == "PASSED"
    return verdicts


def judge_all():
    cases = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))["cases"]
    verdicts = {}
    for case in cases:
        only = case.get("only")
        one = {}
        if only in (None, "agentevals"):
            one.update(agentevals_verdicts(case))
        if only in (None, "adk"):
            one.update(adk_verdicts(case))
        verdicts[case["id"]] = one
    return {
        "about": "Written by .ci/trajectory-conformance/evaluate.py; do not edit. Each case's verdict under each evaluator and setting: true passes.",
        "evaluators": {
            name: importlib.metadata.version(name) for name in ("agentevals", "google-adk")
        },
        "verdicts": verdicts,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when verdicts.json is stale")
    check = parser.parse_args().check
    text = json.dumps(judge_all(), indent=1, ensure_ascii=False) + "\n"
    path = CORPUS / "verdicts.json"
    if not check:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
        return 0
    written = path.read_text(encoding="utf-8") if path.exists() else ""
    if written == text:
        print(f"{path.relative_to(ROOT)}: the evaluators agree with it")
        return 0
    old = json.loads(written)["verdicts"] if written else {}
    new = json.loads(text)["verdicts"]
    for case in sorted(set(old) | set(new)):
        for key in sorted(set(old.get(case, {})) | set(new.get(case, {}))):
            if old.get(case, {}).get(key) != new.get(case, {}).get(key):
                print(
                    f"{case}: {key}: verdicts.json says {old.get(case, {}).get(key)}, "
                    f"the evaluator says {new.get(case, {}).get(key)}",
                    file=sys.stderr,
                )
    print(
        f"{path.relative_to(ROOT)} is stale; run `python .ci/trajectory-conformance/evaluate.py` "
        "with the venv's Python (.ci/trajectory-conformance/venv prints it) and commit it",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
