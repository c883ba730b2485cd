#!/usr/bin/env python3
"""A stand-in for the agent CLIs xstack drives (claude, codex, aider, gemini, opencode).

The tests copy it under each CLI's name into a folder put first on PATH. It records how it
was started (argv, working folder, stdin, environment) in .xstack/agent-log.jsonl of the
workspace, prints what the real CLI documents for its output (Claude Code's stream-json,
Codex's exec --json, Gemini CLI's stream-json, plain text for the others), and writes the
port of the phase from $FAKE_FILES (phaseN/train.py, or train.py) into the workspace. With
$FAKE_ECHO_ENV naming a variable, Claude Code's stand-in repeats that variable's value in
a message, a tool call's input and its final word, as an agent that read its environment
would.
Without the CLI's non-interactive flags it behaves as an interactive program: it reads the
typed prompt line by line and answers each one that asks for .xstack/done. With
$FAKE_TUI=claude it behaves as interactive Claude Code does in a folder it has never seen:
a raw-mode screen with bracketed paste that first asks whether to trust the folder (only
Enter, on its own, answers it; anything else is swallowed, as the real dialog does), then
folds a paste into `[Pasted text #1 +N lines]` and submits it only on an Enter that comes
after the paste has settled (an Enter in the same burst as the paste is part of it).
"""

import json
import os
import shutil
import socket
import sys
import time

NAME = os.path.basename(sys.argv[0])
ARGS = sys.argv[1:]
WS = os.getcwd()
os.makedirs(".xstack", exist_ok=True)


def log(**record):
    record.update(
        agent=NAME,
        argv=ARGS,
        cwd=WS,
        stdin_tty=os.isatty(0),
        env={k: os.environ.get(k) for k in ("XSTACK_PHASE", "XSTACK_TASK", "XSTACK_SEED", "FAKE_MODEL")},
    )
    with open(".xstack/agent-log.jsonl", "a") as f:
        f.write(json.dumps(record) + "\n")


def port(phase):
    files = os.environ["FAKE_FILES"]
    src = os.path.join(files, f"phase{phase}", "train.py")
    if not os.path.exists(src):
        src = os.path.join(files, "train.py")
    shutil.copy(src, "train.py")


def emit(obj):
    print(json.dumps(obj), flush=True)


def probe():
    spec = json.loads(os.environ.get("FAKE_PROBE") or "null")
    if not spec:
        return None
    result = {}
    for key, path in (("inside", "sandbox-inside.txt"), ("outside", spec["outside"]), ("readonly", spec["readonly"])):
        try:
            with open(path, "w") as f:
                f.write("x")
            result[key] = "ok"
        except OSError as e:
            result[key] = str(e)
    try:
        socket.create_connection(("127.0.0.1", spec["port"]), timeout=5).close()
        result["connect"] = "ok"
    except OSError as e:
        result["connect"] = str(e)
    return result


def after(flag):
    return ARGS[ARGS.index(flag) + 1]


def one_shot_prompt():
    if NAME in ("claude", "gemini") and "-p" in ARGS:
        return after("-p")
    if NAME == "codex" and ARGS[:1] == ["exec"]:
        return ARGS[-1]
    if NAME == "aider" and "--message" in ARGS:
        return after("--message")
    if NAME == "opencode" and ARGS[:1] == ["run"]:
        return ARGS[-1]
    return None


def one_shot(prompt):
    phase = int(os.environ["XSTACK_PHASE"])
    log(prompt=prompt, probe=probe())
    port(phase)
    target = os.path.join(WS, "train.py")
    if NAME == "claude":
        emit({"type": "system", "subtype": "init", "session_id": "fake-claude-session", "cwd": WS})
        echoed = os.environ.get(os.environ.get("FAKE_ECHO_ENV", ""), "")
        if echoed:
            emit({"type": "assistant", "message": {"content": [
                {"type": "text", "text": f"The key in my environment is {echoed}."},
                {"type": "tool_use", "id": "t0", "name": "Bash", "input": {"command": f"curl -H 'x-api-key: {echoed}' localhost"}},
            ]}})
        emit({"type": "assistant", "message": {"content": [
            {"type": "text", "text": f"Porting train.py to JAX (phase {phase})."},
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": target, "content": "..."}},
        ]}})
        emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}})
        emit({"type": "result", "subtype": "success", "is_error": False,
              "result": f"The JAX port is complete (phase {phase}).{' Used ' + echoed if echoed else ''}",
              "session_id": "fake-claude-session",
              "total_cost_usd": 0.0125, "usage": {"input_tokens": 1000, "output_tokens": 200}})
    elif NAME == "codex":
        emit({"type": "thread.started", "thread_id": "fake-codex-thread"})
        emit({"type": "turn.started"})
        emit({"type": "item.completed", "item": {"id": "i0", "type": "command_execution",
              "command": "bash -lc 'python train.py'", "aggregated_output": "", "exit_code": 0, "status": "completed"}})
        emit({"type": "item.completed", "item": {"id": "i1", "type": "file_change",
              "changes": [{"path": target, "kind": "update"}], "status": "completed"}})
        emit({"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": f"Migrated train.py to JAX (phase {phase})."}})
        # As the real CLI does, a resumed thread's turn.completed carries the thread's total:
        # 500 in and 50 out for phase 1, 600 and 60 more for phase 2.
        emit({"type": "turn.completed", "usage": {"input_tokens": 500 + 600 * (phase - 1), "cached_input_tokens": 100, "output_tokens": 50 + 60 * (phase - 1)}})
    elif NAME == "gemini":
        emit({"type": "init", "session_id": "fake-gemini-session", "model": "fake"})
        emit({"type": "message", "role": "user", "content": prompt})
        emit({"type": "message", "role": "assistant", "content": "Porting ", "delta": True})
        emit({"type": "message", "role": "assistant", "content": "train.py.", "delta": True})
        emit({"type": "tool_use", "tool_name": "write_file", "tool_id": "w1", "parameters": {"file_path": target}})
        emit({"type": "tool_result", "tool_id": "w1", "status": "success", "output": "ok"})
        emit({"type": "message", "role": "assistant", "content": f"The port is complete (phase {phase}).", "delta": True})
        emit({"type": "result", "status": "success", "stats": {"total_tokens": 70, "input_tokens": 60, "output_tokens": 10}})
    else:
        print(f"{NAME}: applied edits to train.py (phase {phase})", flush=True)


def interactive():
    print(f"fake {NAME} ready", flush=True)
    phase = 0
    typed = []
    for line in sys.stdin:
        typed.append(line.rstrip("\n"))
        if ".xstack/done" in line:
            phase += 1
            log(stdin=typed, phase=phase)
            port(phase)
            typed = []
            with open(".xstack/done", "w") as f:
                f.write("done\n")
            print(f"fake {NAME}: phase {phase} done", flush=True)


def claude_tui():
    import tty

    fd = sys.stdin.fileno()
    tty.setraw(fd)

    def show(text):
        sys.stdout.write(text.replace("\n", "\r\n"))
        sys.stdout.flush()

    # The dialog is drawn in two writes, as a redraw that spans two reads of the terminal
    # is seen: the question first, the folder and the choices a moment later.
    show("\x1b[?2004h\x1b[2J\x1b[H Accessing workspace:\n\n\n\n"
         " Quick safety check: Is this a project you created or one you trust?\n")
    time.sleep(0.2)
    show("\x1b[3;1H " + WS + "\x1b[7;1H"
         " \u276f 1. Yes, I trust this folder\n   2. No, exit\n\n Enter to confirm \u00b7 Esc to cancel\n")
    trusted = False
    phase = 0
    pasted = None
    pasted_at = 0.0
    buffer = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        if not trusted:
            if chunk != b"\r":
                log(swallowed=chunk.decode(errors="replace"))
            trusted = True
            show("\x1b[2J\x1b[H\u256d\u2500\u2500\u2500\u2500\u256e\n\u2502 >  \u2502\n\u2570\u2500\u2500\u2500\u2500\u256f\n  ? for shortcuts\n")
            continue
        buffer += chunk
        while True:
            if buffer.startswith(b"\x1b[200~"):
                end = buffer.find(b"\x1b[201~")
                if end < 0:
                    break
                pasted = buffer[6:end].decode()
                buffer = buffer[end + 6:]
                pasted_at = time.monotonic()
                show(f"\x1b[2;5H[Pasted text #1 +{pasted.count(chr(10))} lines]")
            elif buffer.startswith(b"\r"):
                buffer = buffer[1:]
                if pasted is None or time.monotonic() - pasted_at < 0.15:
                    continue
                text, pasted = pasted, None
                if ".xstack/done" in text:
                    phase += 1
                    log(stdin=text.split("\n"), phase=phase)
                    port(phase)
                    with open(".xstack/done", "w") as f:
                        f.write("done\n")
                    show(f"\x1b[5;1Hfake {NAME}: phase {phase} done")
            elif buffer:
                buffer = buffer[1:]
            else:
                break


prompt = one_shot_prompt()
if prompt is not None:
    one_shot(prompt)
elif os.environ.get("FAKE_TUI") == "claude":
    claude_tui()
else:
    interactive()
