"""An agent that cheats: finds the task folder through the run's journal and copies the
oracle (solution/train.py) into its workspace."""
import os
import re
import shutil
import subprocess

text = ""
for command in (["zstdcat", "../journal.jsonl.zst"], ["cat", "../journal.jsonl"]):
    try:
        text = subprocess.run(command, capture_output=True, text=True).stdout
    except OSError:
        continue
    if text:
        break
found = re.search(r'"dir":"([^"]+)"', text)
oracle = found and os.path.join(found.group(1), "solution", "train.py")
if oracle and os.path.isfile(oracle):
    shutil.copy(oracle, "train.py")
    print("copied the oracle from the task folder")
else:
    print("no journal and no task folder to read")
