#!/usr/bin/env python3
"""A scripted model server for the agent tests, on loopback.

It speaks enough of four model APIs to drive each agent CLI through a migration phase by
phase: the Anthropic Messages API (streaming, tool use), the OpenAI Responses API and Chat
Completions API (streaming, function calls) and the Gemini API (generateContent,
streamGenerateContent, countTokens).

The script (JSON) lists the phases:

    {"phases": [{"marker": "text only phase 1's prompt has",
                 "source": "/abs/file", "target": "train.py",
                 "final": "what the agent says when it is done"}, ...],
     "edit_in_text": false, "file_tools": false}

For each request the server finds the conversation's latest phase (the last phase whose
marker is in a user message) and answers, in that phase, first with one call of the shell
tool the client offered (a `cat > TARGET` of SOURCE's content), then, when the phase has a
`"run"` command, with a second call of the shell tool that runs it, then, once the tool
results follow the phase's prompt, with the final message. With `edit_in_text` (aider, which has no tools) the first
answer is the target file's whole new content in a fenced block under its name. Requests
that are not part of a phase (titles, summaries, checks) get a short text answer. With
`file_tools` and a client that offers `Read` and `Write` tools (Claude Code), the target is
read, then written whole with the file tool (an edit, which `--permission-mode acceptEdits`
allows without asking), instead of the shell call.

Every request is appended to the log (JSON Lines: the path, the phase, the input tokens
reported, what was answered, the texts of the conversation), so a test can assert that
phase 2 saw phase 1's history.
"""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The names CLIs give their shell tool.
SHELL_TOOLS = ("bash", "shell", "exec_command", "run_shell_command", "local_shell")


class Conversation:
    """The texts of a request's conversation, in order, as (kind, text) pairs: kind is
    `system`, `user`, `assistant` or `tool_result`."""

    def __init__(self):
        self.items = []

    def add(self, kind, text):
        if text:
            self.items.append((kind, text))


def flatten(value):
    """All strings inside a JSON value, joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(flatten(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(flatten(v) for v in value.values())
    return ""


def anthropic_conversation(body):
    conv = Conversation()
    conv.add("system", flatten(body.get("system")))
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            conv.add(message.get("role", "user"), content)
            continue
        for block in content or []:
            kind = block.get("type")
            if kind == "tool_result":
                conv.add("tool_result", flatten(block.get("content")) or "(empty)")
            elif kind == "text":
                conv.add(message.get("role", "user"), block.get("text", ""))
            elif kind == "tool_use":
                conv.add("assistant", json.dumps(block.get("input")))
    return conv


def responses_conversation(body):
    conv = Conversation()
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items:
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            conv.add("tool_result", flatten(item.get("output")) or "(empty)")
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            conv.add("assistant", flatten(item.get("arguments") or item.get("action")))
        elif kind == "message":
            role = item.get("role", "user")
            conv.add("assistant" if role == "assistant" else "user", flatten(item.get("content")))
    return conv


def chat_conversation(body):
    conv = Conversation()
    for message in body.get("messages", []):
        role = message.get("role")
        if role == "system":
            conv.add("system", flatten(message.get("content")))
        elif role == "tool":
            conv.add("tool_result", flatten(message.get("content")) or "(empty)")
        elif role == "user":
            conv.add("user", flatten(message.get("content")))
        elif role == "assistant":
            conv.add("assistant", flatten(message.get("content")))
            for call in message.get("tool_calls") or []:
                conv.add("assistant", flatten(call.get("function", {}).get("arguments")))
    return conv


def gemini_conversation(body):
    conv = Conversation()
    for content in body.get("contents", []):
        role = content.get("role", "user")
        for part in content.get("parts", []):
            if "functionResponse" in part:
                conv.add("tool_result", flatten(part["functionResponse"]) or "(empty)")
            elif "functionCall" in part:
                conv.add("assistant", flatten(part["functionCall"]))
            elif "text" in part:
                conv.add("assistant" if role == "model" else "user", part["text"])
    return conv


class Script:
    """The phases, and the decision of what to answer."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        self.phases = data["phases"]
        self.edit_in_text = data.get("edit_in_text", False)
        self.file_tools = data.get("file_tools", False)

    def step(self, conv):
        """(phase number, "tool" or "final") for a conversation, or None outside phases."""
        current = None
        for number, phase in enumerate(self.phases, start=1):
            for index, (kind, text) in enumerate(conv.items):
                if kind == "user" and phase["marker"] in text:
                    current = (number, index)
        if current is None:
            return None
        number, index = current
        results = sum(1 for kind, _ in conv.items[index + 1:] if kind == "tool_result")
        runs = "run" in self.phases[number - 1] and not self.edit_in_text
        writes = 2 if self.file_tools else 1
        if runs and results == writes:
            return number, "run"
        answered = results >= 1
        if self.file_tools:
            if results == 0:
                return number, "read"
            if results == 1:
                return number, "write"
            return number, "final"
        if self.edit_in_text:
            answered = any(
                kind == "assistant" and "```" in text for kind, text in conv.items[index + 1:]
            )
        return number, "final" if answered else "tool"

    def content(self, number):
        with open(self.phases[number - 1]["source"], encoding="utf-8") as f:
            return f.read()

    def command(self, number):
        """A shell command that writes the phase's file: its content is in the command, so
        the agent reads nothing outside its folder."""
        target = self.phases[number - 1]["target"]
        return f"cat > {target} <<'SCRIPTED_EOF'\n{self.content(number)}SCRIPTED_EOF"

    def whole_edit(self, number):
        target = self.phases[number - 1]["target"]
        return f"{target}\n```python\n{self.content(number)}```\n"


def working_directory(system):
    """The folder a client says it works in, from its system prompt or the context it adds to
    the conversation."""
    for line in system.splitlines():
        for label in ("Primary working directory:", "Working directory:", "working directory:"):
            if label in line:
                rest = line.split(label, 1)[1].strip()
                if rest.startswith("/"):
                    return rest.split()[0]
    return None


def shell_arguments(schema, command):
    """Arguments for a shell tool with JSON schema `schema` that run `command`."""
    props = (schema or {}).get("properties", {})
    args = {}
    if "command" in props:
        if props["command"].get("type") == "array":
            args["command"] = ["bash", "-lc", command]
        else:
            args["command"] = command
    elif "cmd" in props:
        args["cmd"] = command
    else:
        args["command"] = command
    for name in (schema or {}).get("required", []):
        if name not in args and props.get(name, {}).get("type") == "string":
            args[name] = "Copy the port into place"
    return args


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scripted-model"

    def log_message(self, *args):
        pass

    def record(self, api, body, conv, step, answer):
        entry = {
            "api": api,
            "input_tokens": tokens(body),
            "path": self.path,
            "phase": step[0] if step else None,
            "step": step[1] if step else None,
            "answer": answer,
            "conversation": conv.items,
        }
        with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd":
            raise ValueError("zstd request bodies are not supported")
        if self.headers.get("Content-Encoding") == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        return json.loads(raw or b"{}")

    def send_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data, event=None):
        text = ""
        if event:
            text += f"event: {event}\n"
        text += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        self.wfile.write(text.encode())
        self.wfile.flush()

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": "scripted", "object": "model"}],
                            "models": []})
        else:
            self.send_json({"error": {"message": f"no such path {path}"}}, 404)

    def do_POST(self):
        path = self.path.split("?")[0]
        try:
            body = self.body()
        except ValueError as e:
            self.send_json({"error": {"message": str(e)}}, 400)
            return
        if path.endswith("/messages/count_tokens"):
            self.send_json({"input_tokens": tokens(body)})
        elif path.endswith("/messages"):
            self.anthropic(body)
        elif path.endswith("/responses"):
            self.openai_responses(body)
        elif path.endswith("/chat/completions"):
            self.chat(body)
        elif ":countTokens" in path:
            self.send_json({"totalTokens": tokens(body)})
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self.gemini(body, stream=":streamGenerateContent" in path)
        else:
            self.send_json({"error": {"message": f"no such path {path}"}}, 404)

    def decide(self, conv, tools):
        """(step, text, tool call) for a conversation: the call is (tool, arguments)."""
        script = self.server.script
        system = "\n".join(text for kind, text in conv.items if kind == "system").lower()
        if script.edit_in_text and "one-line commit message" in system:
            # aider asks its weak model for a commit message after each edit…
            return None, "Port to JAX", None
        if script.edit_in_text and "summarize this partial conversation" in system:
            # …and for a summary of the chat so far.
            return None, "I asked you to port train.py to JAX; you wrote it.", None
        step = script.step(conv)
        if step is None:
            return None, "OK.", None
        number, kind = step
        if kind == "final":
            return step, script.phases[number - 1]["final"], None
        if script.edit_in_text:
            return step, script.whole_edit(number), None
        if kind in ("read", "write"):
            names = {name for name, _ in tools}
            folder = working_directory("\n".join(text for _, text in conv.items))
            if {"Read", "Write"} <= names and folder:
                path = os.path.join(folder, script.phases[number - 1]["target"])
                if kind == "read":
                    return step, "", ("Read", {"file_path": path})
                return step, "", ("Write", {"file_path": path, "content": script.content(number)})
            return None, "OK.", None
        command = script.phases[number - 1]["run"] if kind == "run" else script.command(number)
        for name, schema in tools:
            if name.lower() in SHELL_TOOLS:
                return step, "", (name, shell_arguments(schema, command))
        return None, "OK.", None

    # Anthropic Messages API.
    def anthropic(self, body):
        conv = anthropic_conversation(body)
        tools = [(t.get("name", ""), t.get("input_schema")) for t in body.get("tools", [])]
        step, text, call = self.decide(conv, tools)
        self.record("anthropic", body, conv, step, call or text)
        n = self.server.next_id()
        usage_in = tokens(body)
        blocks = []
        if text:
            blocks.append({"type": "text", "text": text})
        if call:
            blocks.append({"type": "tool_use", "id": f"toolu_{n}", "name": call[0], "input": call[1]})
        stop = "tool_use" if call else "end_turn"
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant",
                   "model": body.get("model", "scripted"), "content": [], "stop_reason": None,
                   "stop_sequence": None,
                   "usage": {"input_tokens": usage_in, "output_tokens": 1}}
        if not body.get("stream"):
            message.update(content=blocks, stop_reason=stop,
                           usage={"input_tokens": usage_in, "output_tokens": 20})
            self.send_json(message)
            return
        self.start_sse()
        self.sse({"type": "message_start", "message": message}, "message_start")
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                self.sse({"type": "content_block_start", "index": index,
                          "content_block": {"type": "text", "text": ""}}, "content_block_start")
                self.sse({"type": "content_block_delta", "index": index,
                          "delta": {"type": "text_delta", "text": block["text"]}},
                         "content_block_delta")
            else:
                self.sse({"type": "content_block_start", "index": index,
                          "content_block": {"type": "tool_use", "id": block["id"],
                                            "name": block["name"], "input": {}}},
                         "content_block_start")
                self.sse({"type": "content_block_delta", "index": index,
                          "delta": {"type": "input_json_delta",
                                    "partial_json": json.dumps(block["input"])}},
                         "content_block_delta")
            self.sse({"type": "content_block_stop", "index": index}, "content_block_stop")
        self.sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": 20}}, "message_delta")
        self.sse({"type": "message_stop"}, "message_stop")

    # OpenAI Responses API.
    def openai_responses(self, body):
        conv = responses_conversation(body)
        tools = [(t.get("name", t.get("type", "")), t.get("parameters"))
                 for t in body.get("tools", [])]
        step, text, call = self.decide(conv, tools)
        self.record("responses", body, conv, step, call or text)
        n = self.server.next_id()
        usage = {"input_tokens": tokens(body), "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": tokens(body) + 20}
        output = []
        if text:
            output.append({"type": "message", "id": f"msg_{n}", "role": "assistant",
                           "status": "completed",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]})
        if call:
            output.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                           "name": call[0], "arguments": json.dumps(call[1]),
                           "status": "completed"})
        response = {"id": f"resp_{n}", "object": "response", "status": "in_progress",
                    "model": body.get("model", "scripted"), "output": []}
        if not body.get("stream"):
            response.update(status="completed", output=output, usage=usage)
            self.send_json(response)
            return
        self.start_sse()
        self.sse({"type": "response.created", "response": response}, "response.created")
        for index, item in enumerate(output):
            self.sse({"type": "response.output_item.added", "output_index": index,
                      "item": dict(item, status="in_progress")}, "response.output_item.added")
            if item["type"] == "message":
                self.sse({"type": "response.output_text.delta", "output_index": index,
                          "item_id": item["id"], "content_index": 0, "delta": text},
                         "response.output_text.delta")
            self.sse({"type": "response.output_item.done", "output_index": index, "item": item},
                     "response.output_item.done")
        response.update(status="completed", output=output, usage=usage)
        self.sse({"type": "response.completed", "response": response}, "response.completed")

    # OpenAI Chat Completions API.
    def chat(self, body):
        conv = chat_conversation(body)
        tools = [(t.get("function", {}).get("name", ""), t.get("function", {}).get("parameters"))
                 for t in body.get("tools", [])]
        step, text, call = self.decide(conv, tools)
        self.record("chat", body, conv, step, call or text)
        n = self.server.next_id()
        usage = {"prompt_tokens": tokens(body), "completion_tokens": 20,
                 "total_tokens": tokens(body) + 20}
        tool_calls = []
        if call:
            tool_calls.append({"index": 0, "id": f"call_{n}", "type": "function",
                               "function": {"name": call[0], "arguments": json.dumps(call[1])}})
        finish = "tool_calls" if call else "stop"
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model", "scripted")}
        if not body.get("stream"):
            message = {"role": "assistant", "content": text or None}
            if tool_calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"}
                                         for c in tool_calls]
            self.send_json(dict(base, object="chat.completion", usage=usage, choices=[
                {"index": 0, "message": message, "finish_reason": finish}]))
            return
        self.start_sse()
        delta = {"role": "assistant", "content": text}
        self.sse(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]))
        if tool_calls:
            self.sse(dict(base, choices=[{"index": 0, "delta": {"tool_calls": tool_calls},
                                          "finish_reason": None}]))
        self.sse(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
        self.sse(dict(base, choices=[], usage=usage))
        self.sse("[DONE]")

    # Gemini API.
    def gemini(self, body, stream):
        conv = gemini_conversation(body)
        tools = []
        for tool in body.get("tools", []):
            for decl in tool.get("functionDeclarations", []):
                tools.append((decl.get("name", ""),
                              decl.get("parameters") or decl.get("parametersJsonSchema")))
        step, text, call = self.decide(conv, tools)
        config = body.get("generationConfig", {})
        if step is None and config.get("responseMimeType") == "application/json":
            # A structured check (Gemini CLI routes the request to a model, asks who speaks
            # next): an answer of the asked shape, in which the user speaks next.
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            text = json.dumps(fill_schema(schema))
        self.record("gemini", body, conv, step, call or text)
        parts = []
        if text:
            parts.append({"text": text})
        if call:
            parts.append({"functionCall": {"name": call[0], "args": call[1]}})
        response = {"candidates": [{"content": {"role": "model", "parts": parts},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": tokens(body),
                                      "candidatesTokenCount": 20,
                                      "totalTokenCount": tokens(body) + 20},
                    "modelVersion": "scripted"}
        if not stream:
            self.send_json(response)
            return
        self.start_sse()
        self.sse(response)


def fill_schema(schema):
    """A value of JSON schema `schema` (Gemini's upper-case types too)."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if kind == "object":
        return {name: fill_schema(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return 1
    if kind == "boolean":
        return False
    return "user"


def tokens(body):
    """A deterministic token count for a request: a quarter of its size."""
    return max(1, len(json.dumps(body)) // 4)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script, log_path):
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script
        self.log_path = log_path
        self.log_lock = threading.Lock()
        self.counter = 0
        self.counter_lock = threading.Lock()

    def next_id(self):
        with self.counter_lock:
            self.counter += 1
            return self.counter


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    server = Server(Script(args.script), args.log)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
