#!/usr/bin/env python3
"""Extracts the Chat Completions request schema from OpenAI's OpenAPI document.

Usage: extract.py OPENAPI_JSON COMMIT > chat-completions-request.json

Keeps `components.schemas.CreateChatCompletionRequest` and every schema it references,
transitively, unchanged; records where they came from under `x-provenance`. Nothing is
edited by hand: to refresh, run it again on a newer `openapi.json` of
https://github.com/openai/openai-openapi and record the commit.
"""

import json
import sys

ROOT = "CreateChatCompletionRequest"
PREFIX = "#/components/schemas/"


def main() -> None:
    path, commit = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    schemas = document["components"]["schemas"]
    kept = {}

    def walk(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(PREFIX):
                name = ref[len(PREFIX):]
                if name not in kept:
                    kept[name] = schemas[name]
                    walk(schemas[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    kept[ROOT] = schemas[ROOT]
    walk(schemas[ROOT])
    extract = {
        "x-provenance": {
            "repository": "https://github.com/openai/openai-openapi",
            "commit": commit,
            "path": "openapi.json",
            "openapi": document["openapi"],
            "api_version": document["info"]["version"],
            "root": PREFIX + ROOT,
            "licence": "MIT, see LICENSE next to this file",
        },
        "components": {"schemas": dict(sorted(kept.items()))},
    }
    json.dump(extract, sys.stdout, indent=1, sort_keys=False, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
