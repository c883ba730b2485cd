"""The experiment's cells of makemore_part2_mlp.ipynb (0 to 6, 21 to 30) run as a script, for
the calibration in task.toml: the runs that change what the notebook runs (cell 6 run several
times, as the author's kernel had it; other seeds than the notebook's own).

    cd tasks/sources/zero-to-hero/lectures/makemore
    OMP_NUM_THREADS=1 python ../../../../makemore-part2-mlp/calibration/run_cells.py SHUFFLES SEED

SHUFFLES: how many times cell 6 (random.seed(42); random.shuffle(words)) runs: 1 as a
top-to-bottom run, 4 as the author's kernel had it. SEED: `none` for the notebook's own seeds
(the parameters' generator 2147483647, torch's global generator as a fresh process has it), or
an integer s: torch.manual_seed(s) for the batches and the parameters' generator seeded s.
Prints cell 29's and cell 30's loss (train, dev) at full precision.
"""
import json
import sys
import time

shuffles, seed = int(sys.argv[1]), sys.argv[2]
nb = json.load(open("makemore_part2_mlp.ipynb"))
src = {i: "".join(c["source"]) for i, c in enumerate(nb["cells"])}
ns = {}
exec("import torch\nimport torch.nn.functional as F\n", ns)
for i in (1, 3, 4):
    exec(src[i], ns)
for _ in range(shuffles):
    exec(src[6], ns)
if seed != "none":
    ns["torch"].manual_seed(int(seed))
for i in (22, 23, 24, 25, 26):
    code = src[i]
    if i == 22 and seed != "none":
        code = code.replace("manual_seed(2147483647)", "manual_seed(%d)" % int(seed))
    exec(code, ns)
start = time.time()
exec(src[27], ns)
print("training", round(time.time() - start, 1), "s", flush=True)
for i in (29, 30):
    exec(src[i], ns)
    print("cell", i, ns["loss"].item(), flush=True)
