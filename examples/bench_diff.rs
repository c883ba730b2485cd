//! Times a highlighted side-by-side diff of a generated ~6,000-line Python file pair with
//! about 2% of its lines changed: load, diff, highlight and `render_text` with colours.
//!
//! `cargo run --release --example bench_diff [-- DIR]`: with DIR, the pair is written there
//! as `old.py` and `new.py` and kept (to compare other tools on the same files).

use std::error::Error;
use std::path::Path;
use std::time::{Duration, Instant};

use xstack::diff::{
    CompareOptions, DEFAULT_THEME, DiffOptions, HighlightRequest, HighlightScope, Highlighter,
    build_views, load_pair, render_text,
};

const LINES: usize = 6_000;
const RUNS: usize = 10;
const WIDTH: usize = 200;

/// A small deterministic generator (64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// About `LINES` lines of PyTorch-style code.
fn source() -> Vec<String> {
    let mut lines = vec![
        "import math".to_owned(),
        "import torch".to_owned(),
        "import torch.nn as nn".to_owned(),
        "import torch.nn.functional as F".to_owned(),
        String::new(),
    ];
    let mut i = 0;
    while lines.len() < LINES {
        let block = [
            String::new(),
            String::new(),
            format!("class Block{i}(nn.Module):"),
            format!("    \"\"\"Residual block number {i}: norm, projection, activation.\"\"\""),
            String::new(),
            format!(
                "    def __init__(self, dim: int = {}, dropout: float = 0.1):",
                64 + i % 7 * 32
            ),
            "        super().__init__()".to_owned(),
            "        self.norm = nn.LayerNorm(dim)".to_owned(),
            "        self.fc = nn.Linear(dim, dim * 4)  # expand".to_owned(),
            "        self.out = nn.Linear(dim * 4, dim)".to_owned(),
            format!("        self.name = f\"block-{i}-{{dim}}\""),
            String::new(),
            "    def forward(self, x: torch.Tensor) -> torch.Tensor:".to_owned(),
            "        h = self.norm(x)".to_owned(),
            format!("        h = F.gelu(self.fc(h)) * math.sqrt(0.5 + {i} / 100)"),
            "        return x + self.out(h)".to_owned(),
        ];
        lines.extend(block);
        i += 1;
    }
    lines.truncate(LINES);
    lines
}

/// A copy with about 2% of the lines edited, inserted or deleted.
fn edited(old: &[String], rng: &mut Lcg) -> Vec<String> {
    let mut new = Vec::with_capacity(old.len());
    for line in old {
        match rng.below(150) {
            0 | 1 => new.push(
                line.replace("torch.Tensor", "jax.Array")
                    .replace("nn.Linear", "nn.Dense")
                    .replace("F.gelu", "jax.nn.gelu")
                    + "  # ported",
            ),
            2 => {
                new.push(line.clone());
                new.push("        h = jnp.clip(h, -10.0, 10.0)".to_owned());
            }
            3 => {}
            _ => new.push(line.clone()),
        }
    }
    new
}

fn main() -> Result<(), Box<dyn Error>> {
    let tmp = tempfile::tempdir()?;
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| tmp.path().to_path_buf(), Into::into);
    std::fs::create_dir_all(&dir)?;
    let old = source();
    let new = edited(&old, &mut Lcg(42));
    let (old_path, new_path) = (dir.join("old.py"), dir.join("new.py"));
    std::fs::write(&old_path, old.join("\n") + "\n")?;
    std::fs::write(&new_path, new.join("\n") + "\n")?;
    println!(
        "pair: {} ({} lines) vs {} ({} lines)",
        old_path.display(),
        old.len(),
        new_path.display(),
        new.len()
    );

    for scope in [HighlightScope::ShownLines, HighlightScope::WholeFile] {
        let mut times = Vec::with_capacity(RUNS);
        let mut bytes = 0;
        for _ in 0..RUNS {
            // A fresh highlighter each run: nothing is cached between runs.
            let (elapsed, out) = run_once(&old_path, &new_path, scope)?;
            times.push(elapsed);
            bytes = out;
        }
        let first = times[0];
        times.sort();
        println!(
            "{scope:?}: first run {:.1} ms (includes loading syntax definitions once), \
             median {:.1} ms, min {:.1} ms over {RUNS} runs; {bytes} bytes of output",
            ms(first),
            ms(times[RUNS / 2]),
            ms(times[0]),
        );
    }
    Ok(())
}

fn run_once(
    old: &Path,
    new: &Path,
    scope: HighlightScope,
) -> Result<(Duration, usize), Box<dyn Error>> {
    let start = Instant::now();
    let pair = load_pair(old, new, &CompareOptions::default())?;
    let highlighter = Highlighter::default();
    let request = HighlightRequest {
        highlighter: &highlighter,
        theme: DEFAULT_THEME,
        scope,
    };
    let views = build_views(
        &pair.entries,
        &pair.old,
        &pair.new,
        &DiffOptions::default(),
        Some(&request),
    )?;
    let text = render_text(&views, WIDTH, true);
    let elapsed = start.elapsed();
    Ok((elapsed, text.len()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
