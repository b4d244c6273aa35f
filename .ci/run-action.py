#!/usr/bin/env python3
"""Runs the composite GitHub Action of action.yml here, as a runner would, for .ci/release.

Usage: run-action.py ACTION_YML WORKDIR [input=value ...]

Each `run` step runs with `bash --noprofile --norc -eo pipefail` in its working
directory, with its `env`, GITHUB_ACTION_PATH (the folder of action.yml), GITHUB_PATH,
GITHUB_OUTPUT, GITHUB_ENV and GITHUB_STEP_SUMMARY files under WORKDIR, and the folders
earlier steps added to GITHUB_PATH put on PATH, as a runner does. `uses` steps (cache,
upload) are not run: they are printed with their inputs. `${{ }}` expressions and `if:`
conditions are evaluated for the few forms action.yml uses (inputs, runner, steps'
outputs, always(), ==, !=, &&, ||); any other form is an error, so that a change to
action.yml that this runner cannot follow fails the test rather than pass unseen.

Exits as the action would: with the exit code of the first failed step, else 0. Prints
the step outputs and the GITHUB_PATH entries as JSON on its last line.
"""

import json
import os
import platform
import re
import subprocess
import sys

import yaml


def main():
    action_yml, workdir, *pairs = sys.argv[1:]
    with open(action_yml, encoding="utf-8") as f:
        action = yaml.safe_load(f)
    assert action["runs"]["using"] == "composite", "action.yml is not a composite action"
    declared = action.get("inputs") or {}
    inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in declared:
            sys.exit(f"run-action: action.yml has no input {name!r}")
        inputs[name] = value

    os.makedirs(workdir, exist_ok=True)
    files = {}
    for name in ("GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"):
        files[name] = os.path.join(workdir, name.lower())
        open(files[name], "a").close()
    tool_cache = os.path.join(workdir, "tool-cache")
    arch = {"x86_64": "X64", "aarch64": "ARM64", "arm64": "ARM64"}[platform.machine()]
    runner = {"os": "Linux" if sys.platform.startswith("linux") else "macOS",
              "arch": arch, "tool_cache": tool_cache, "temp": os.path.join(workdir, "temp")}
    os.makedirs(runner["temp"], exist_ok=True)
    steps = {}
    failed = None
    added_path = []

    def value(expr):
        expr = expr.strip()
        m = re.fullmatch(r"inputs\.([\w-]+)", expr)
        if m:
            if m.group(1) not in inputs:
                raise SystemExit(f"run-action: no input {m.group(1)!r} in {expr!r}")
            return inputs[m.group(1)]
        m = re.fullmatch(r"runner\.(\w+)", expr)
        if m:
            return runner[m.group(1)]
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return steps.get(m.group(1), {}).get(m.group(2), "")
        m = re.fullmatch(r"'([^']*)'", expr)
        if m:
            return m.group(1)
        raise SystemExit(f"run-action: cannot evaluate ${{{{ {expr} }}}}")

    def condition(expr):
        expr = expr.strip()
        if expr.startswith("${{") and expr.endswith("}}"):
            expr = expr[3:-2]
        alternatives = []
        for alternative in expr.split("||"):
            terms = []
            for term in alternative.split("&&"):
                term = term.strip()
                if term == "always()":
                    terms.append(True)
                elif term == "success()":
                    terms.append(failed is None)
                elif term == "failure()":
                    terms.append(failed is not None)
                else:
                    m = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", term)
                    if not m:
                        raise SystemExit(f"run-action: cannot evaluate the condition {expr!r}")
                    equal = value(m.group(1)) == value(m.group(3))
                    terms.append(equal if m.group(2) == "==" else not equal)
            # A condition without a status function holds only while nothing failed.
            if not re.search(r"\b(always|failure|cancelled)\(\)", alternative):
                terms.append(failed is None)
            alternatives.append(all(terms))
        return any(alternatives)

    def expand(text):
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: value(m.group(1)), str(text))

    for step in action["runs"]["steps"]:
        name = expand(step.get("name", step.get("uses", step.get("run", "")[:40])))
        if not condition(step.get("if", "success()")):
            print(f"run-action: -- skipped: {name}", file=sys.stderr, flush=True)
            continue
        if "uses" in step:
            with_ = {k: expand(v) for k, v in (step.get("with") or {}).items()}
            print(f"run-action: -- not run here: {step['uses']} {json.dumps(with_)}",
                  file=sys.stderr, flush=True)
            continue
        if step.get("shell") != "bash":
            raise SystemExit(f"run-action: step {name!r} has no `shell: bash`")
        print(f"run-action: -- {name}", file=sys.stderr, flush=True)
        env = dict(os.environ)
        env.update({k: expand(v) for k, v in (step.get("env") or {}).items()})
        env["PATH"] = os.pathsep.join(added_path + [os.environ["PATH"]])
        env["GITHUB_ACTION_PATH"] = os.path.dirname(os.path.abspath(action_yml))
        env["GITHUB_ACTIONS"] = "true"
        env["RUNNER_OS"] = runner["os"]
        env["RUNNER_ARCH"] = runner["arch"]
        env["RUNNER_TOOL_CACHE"] = tool_cache
        env["RUNNER_TEMP"] = runner["temp"]
        env.update(files)
        open(files["GITHUB_OUTPUT"], "w").close()
        cwd = expand(step.get("working-directory", "."))
        code = subprocess.call(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step["run"])],
            cwd=cwd, env=env)
        outputs = {}
        with open(files["GITHUB_OUTPUT"], encoding="utf-8") as f:
            for line in f:
                key, sep, val = line.rstrip("\n").partition("=")
                if sep:
                    outputs[key] = val
        if "id" in step:
            steps[step["id"]] = outputs
        with open(files["GITHUB_PATH"], encoding="utf-8") as f:
            added_path = [line.strip() for line in f if line.strip()][::-1]
        if code != 0:
            print(f"run-action: -- {name} exited {code}", file=sys.stderr, flush=True)
            if failed is None:
                failed = code
    print(json.dumps({"steps": steps, "path": added_path[::-1], "exit": failed or 0}))
    sys.exit(failed or 0)


if __name__ == "__main__":
    main()
