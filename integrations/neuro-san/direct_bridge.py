#!/usr/bin/env python3
"""Prill's bridge to neuro-san's `direct` connection.

Prill starts this program once per conversation, with the agent's name as its only
argument, and talks to it in the JSON-lines protocol of docs/direct-agents.md: one
request per stdin line, answer lines on stdout, the last of each answer an
AGENT_FRAMEWORK message. On the other side it runs the agent network in this process
through neuro-san's own library (`AgentSessionFactory().create_session("direct", ...)`),
exactly as neuro-san's data-driven test driver does for a file that names no connection.

neuro-san finds the agent networks and coded tools from its usual environment variables
(AGENT_MANIFEST_FILE, AGENT_TOOL_PATH, PYTHONPATH, the model's keys), which Prill passes
on from `[neuro_san]` in prill.toml or from its own environment.

What is honoured, per conversation (read from its first request):
- `use_direct`: how external agents (`/name` tools) are reached;
- `metadata`: the session's request metadata (neuro-san copies it into sly_data
  `request_metadata`);
and per request: `user_message.text`, `chat_context`, `sly_data` and `chat_filter`,
passed to the session unchanged.

As a warm worker (`--worker` instead of an agent), it loads neuro-san once (then writes
`{"prill_worker": "ready"}`) and serves one conversation after another: a line
`{"prill_worker": "open", "agent": NAME}` ends
the conversation before it (its session closed) and starts one with NAME, answered by
`{"prill_worker": "opened"}` once neuro-san is loaded; the requests that follow are the
conversation's, as above. Each conversation gets a fresh session; what a coded tool
leaves in the process (module globals) is the limit of this mode.

Run by hand:
    echo '{"user_message": {"text": "hi"}, "metadata": {}}' | python direct_bridge.py hello_world
"""

import enum
import json
import os
import sys
import traceback

# The protocol's lines go to the real stdout; anything the library prints goes to
# stderr instead, where Prill keeps it for error messages.
PROTOCOL = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

FINAL = "AGENT_FRAMEWORK"
REQUEST_FIELDS = ("user_message", "chat_context", "sly_data", "chat_filter")


def plain(value):
    """`value` as plain JSON data: enums (message types) by name, tuples as lists."""
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def message_type(response):
    """The type name of a streamed response's message, or None."""
    message = response.get("response")
    if not isinstance(message, dict):
        return None
    kind = message.get("type")
    if isinstance(kind, str):
        return kind.upper()
    return None


def send(response):
    PROTOCOL.write(json.dumps(response) + "\n")
    PROTOCOL.flush()


def answer(session, request):
    """Streams one answer. Every message goes out as it comes except the AGENT_FRAMEWORK
    ones: Prill reads the first of those as the end of the answer, so they are held
    back and only the last, neuro-san's final message, goes out, at the end."""
    chat_request = {key: request[key] for key in REQUEST_FIELDS if key in request}
    final = None
    for raw in session.streaming_chat(chat_request):
        response = plain(raw)
        if not isinstance(response, dict) or not response:
            continue  # keep-alives, and the empty answer to a request without text
        if message_type(response) == FINAL:
            if final is not None:
                text = str(final["response"].get("text", ""))[:200]
                print(f"bridge: an earlier AGENT_FRAMEWORK message was not passed on: {text!r}",
                      file=sys.stderr, flush=True)
            final = response
            continue
        send(response)
    # neuro-san answers a request without text with no message at all; over http that is
    # an empty answer, and an empty final message says the same here.
    send(final if final is not None else {"response": {"type": FINAL}})


WORKER = "prill_worker"


def serve(agent, lines, factory):
    """Answers the requests of `lines` in one conversation with `agent`, until a line
    that is not a request (a worker's next `open`), which is returned; None at the end."""
    session = None
    try:
        for line in lines:
            if not line.strip():
                continue
            request = json.loads(line)
            if WORKER in request:
                return request
            if session is None:
                metadata = request.get("metadata") or None
                session = factory().create_session(
                    "direct", agent, use_direct=bool(request.get("use_direct", False)),
                    metadata=metadata)
            # neuro-san's driver resets a direct session before every interaction, so
            # that the origins in the chat context match up.
            session.reset()
            answer(session, request)
        return None
    finally:
        if session is not None:
            session.close()


def main():
    if len(sys.argv) != 2:
        print("usage: direct_bridge.py <agent> | --worker", file=sys.stderr)
        return 2

    # Loaded before the first line is read: a worker pays for it while Prill waits.
    from neuro_san.client.agent_session_factory import AgentSessionFactory

    if sys.argv[1] != "--worker":
        serve(sys.argv[1], sys.stdin, AgentSessionFactory)
        return 0
    send({WORKER: "ready"})
    control = None
    for line in sys.stdin:
        if line.strip():
            control = json.loads(line)
            break
    while control is not None:
        if control.get(WORKER) != "open" or not isinstance(control.get("agent"), str):
            print(f"bridge: not a worker's open line: {json.dumps(control)[:200]}",
                  file=sys.stderr, flush=True)
            return 2
        send({WORKER: "opened"})
        control = serve(control["agent"], sys.stdin, AgentSessionFactory)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # pylint: disable=broad-exception-caught
        # Prill reports the end of stderr with the error; the traceback says what broke.
        traceback.print_exc(file=sys.stderr)
        sys.exit(1)
