//! The framework of the experiment `xstack init` makes a task of (SPEC §2c), read from its
//! imports without running anything: the file the command runs (a notebook's code cells)
//! and the repository's own modules it imports, followed from there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::task::{Framework, Migration};

/// How many of the repository's files are read at most, following imports from the entry.
const MAX_FILES: usize = 64;

/// The direction of the task: `--from` when given, else the experiment's imports (PyTorch
/// when they import neither), with the reason in words for the proposal.
pub fn choose(
    from_flag: Option<Framework>,
    repo: &Path,
    entry: Option<&Path>,
) -> (Migration, String) {
    if let Some(from) = from_flag {
        return (
            Migration {
                from,
                to: from.other(),
            },
            "From --from.".to_string(),
        );
    }
    match entry.map(|entry| of_experiment(repo, entry)) {
        Some(Imports {
            framework: Some(from),
            reason,
            ..
        }) => (
            Migration {
                from,
                to: from.other(),
            },
            format!("{reason}; `--from` overrides."),
        ),
        _ => (
            Migration::default(),
            "The experiment imports neither framework: PyTorch to JAX, the default; `--from` overrides.".to_string(),
        ),
    }
}

/// What the experiment imports, and from which file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imports {
    /// The framework that trains: PyTorch when the files import torch and use it to train
    /// (torch.nn, torch.optim, autograd, a library built on it) or import no JAX; JAX when
    /// they import JAX or a library of it and use torch, if at all, only for data, logging
    /// and tensor helpers (torch.utils.data, torchvision, torch.utils.tensorboard,
    /// torch.as_tensor); None when they import neither.
    pub framework: Option<Framework>,
    /// The file (relative to the repository) whose import decided it.
    pub file: Option<String>,
    /// Why, in words for the proposal.
    pub reason: String,
}

/// `from X import a, b as c` (a parenthesised list over several lines too) and `import X.Y
/// as Z, W` at the start of a line (indented ones too: imports inside functions and `try`
/// blocks count).
static IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    crate::patterns::constant(
        r"(?m)^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]+))",
    )
});

/// A dotted name in code (`torch.utils.data.DataLoader`), not itself an attribute of
/// something else.
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| crate::patterns::constant(r"(?:^|[^\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)"));

/// Where a torch module path sends the experiment: training with PyTorch, or only helping a
/// JAX experiment with data and logging, or with tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TorchRole {
    /// Training with PyTorch: its layers, optimisers, autograd, or a library built on it.
    Trains,
    /// Loading data or logging.
    Data,
    /// Making or moving tensors.
    Tensors,
}

/// Torch modules whose use is training with PyTorch.
const TRAINS: &[&str] = &["torch.nn", "torch.optim", "torch.autograd", "torch.func"];
/// Torch modules that load data or log, and the torch-family libraries that do only that.
const DATA: &[&str] = &[
    "torch.utils.data",
    "torch.utils.tensorboard",
    "torchvision",
    "torchaudio",
    "torchtext",
];

/// Whether the dotted `path` is `module` or inside it.
fn within(path: &str, module: &str) -> bool {
    path.strip_prefix(module)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// The role of a dotted path of the torch family and its name for the proposal
/// (`torchvision.datasets.MNIST` → data, `torchvision.datasets`); None for other paths.
fn torch_role(path: &str) -> Option<(TorchRole, String)> {
    let top = path.split('.').next().unwrap_or(path);
    if !Framework::Torch.family().iter().any(|l| l.module == top) {
        return None;
    }
    let two = || path.split('.').take(2).collect::<Vec<_>>().join(".");
    if let Some(module) = TRAINS.iter().find(|m| within(path, m)) {
        return Some((TorchRole::Trains, module.to_string()));
    }
    if let Some(module) = DATA.iter().find(|m| within(path, m)) {
        let shown = if module.contains('.') {
            module.to_string()
        } else {
            two()
        };
        return Some((TorchRole::Data, shown));
    }
    if top != Framework::Torch.module() {
        // Lightning, torchmetrics, triton: libraries that train or compute with PyTorch.
        return Some((TorchRole::Trains, top.to_string()));
    }
    Some((TorchRole::Tensors, two()))
}

/// What one file imports: the dotted paths, and the names the imports bind with the path
/// each stands for (`import torch as th` binds `th` to `torch`).
#[derive(Debug, Default)]
struct FileImports {
    paths: Vec<String>,
    bindings: Vec<(String, String)>,
}

/// The imports of `code`; with `module_level`, those a function's body holds are left out
/// (a module the experiment imports runs only its top level: a package's `__init__.py`
/// that imports every variant inside functions imports none of them).
fn file_imports(code: &str, module_level: bool) -> FileImports {
    let mut out = FileImports::default();
    let name_and_alias = |item: &str| -> Option<(String, Option<String>)> {
        let mut words = item.split_whitespace();
        let name = words
            .next()
            .filter(|n| {
                n.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '*')
            })?
            .to_string();
        let alias = match (words.next(), words.next()) {
            (Some("as"), Some(alias)) => Some(alias.to_string()),
            _ => None,
        };
        Some((name, alias))
    };
    for c in IMPORT.captures_iter(code) {
        if module_level && c.get(0).is_some_and(|m| in_function(code, m.start())) {
            continue;
        }
        if let (Some(from), Some(list)) = (c.get(1), c.get(2)) {
            // `from . import utils` reads `utils` beside the file.
            let module = from.as_str().trim_start_matches('.');
            let list: Vec<&str> = list
                .as_str()
                .trim_matches(|c| c == '(' || c == ')')
                .lines()
                .filter_map(|line| line.split('#').next())
                .collect();
            for (name, alias) in list.join(" ").split(',').filter_map(name_and_alias) {
                if name == "*" {
                    out.paths
                        .extend((!module.is_empty()).then(|| module.to_string()));
                    continue;
                }
                let path = if module.is_empty() {
                    name.clone()
                } else {
                    format!("{module}.{name}")
                };
                out.bindings.push((alias.unwrap_or(name), path.clone()));
                out.paths.push(path);
            }
        } else if let Some(list) = c.get(3) {
            for (path, alias) in list.as_str().split(',').filter_map(name_and_alias) {
                let top = path.split('.').next().unwrap_or(&path).to_string();
                match alias {
                    Some(alias) => out.bindings.push((alias, path.clone())),
                    None => out.bindings.push((top.clone(), top)),
                }
                out.paths.push(path);
            }
        }
    }
    out
}

/// Whether the line at byte `at` of `code` is inside a function's body: a `def` line
/// encloses it (the nearest less-indented line, and so on outwards).
fn in_function(code: &str, at: usize) -> bool {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
    let first = code[line_start..].lines().next().unwrap_or("");
    let mut level = indent(first);
    for line in code[..line_start].lines().rev() {
        let text = line.trim_start();
        if level == 0 {
            break;
        }
        if text.is_empty() || text.starts_with('#') || indent(line) >= level {
            continue;
        }
        if text.starts_with("def ") || text.starts_with("async def ") {
            return true;
        }
        level = indent(line);
    }
    false
}

/// The torch-family paths `code` uses: those it imports by name (`from torch.utils.data
/// import DataLoader`) and the dotted names it writes from a bound name (`th.as_tensor`
/// with `import torch as th` is `torch.as_tensor`).
fn torch_uses(code: &str, imports: &FileImports) -> Vec<String> {
    let mut uses: Vec<String> = imports
        .paths
        .iter()
        .filter(|p| p.contains('.'))
        .cloned()
        .collect();
    for c in DOTTED.captures_iter(code) {
        let Some(chain) = c.get(1) else { continue };
        let (head, rest) = chain
            .as_str()
            .split_once('.')
            .unwrap_or((chain.as_str(), ""));
        if let Some((_, path)) = imports.bindings.iter().find(|(name, _)| name == head) {
            uses.push(format!("{path}.{rest}"));
        }
    }
    uses.retain(|u| torch_role(u).is_some());
    uses
}

/// What the files read so far say about each framework.
#[derive(Debug, Default)]
struct Evidence {
    /// The JAX-family modules imported, in order, and the first file importing one.
    jax: Vec<String>,
    jax_file: Option<String>,
    /// The first file importing torch.
    torch_file: Option<String>,
    /// The first use of torch to train, and its file.
    training: Option<(String, String)>,
    /// Torch's other uses, by name: data and logging, then tensor helpers.
    data: Vec<String>,
    tensors: Vec<String>,
}

impl Evidence {
    /// Adds a file's imports and uses.
    fn add(&mut self, shown: &str, code: &str, imports: &FileImports) {
        let tops = imports
            .paths
            .iter()
            .map(|p| p.split('.').next().unwrap_or(p));
        let mut imports_torch = false;
        for top in tops {
            if Framework::Jax.modules().contains(&top) {
                if !self.jax.iter().any(|m| m == top) {
                    self.jax.push(top.to_string());
                }
                self.jax_file.get_or_insert_with(|| shown.to_string());
            } else if Framework::Torch.modules().contains(&top) {
                imports_torch = true;
                self.torch_file.get_or_insert_with(|| shown.to_string());
            }
        }
        for path in torch_uses(code, imports) {
            let Some((role, name)) = torch_role(&path) else {
                continue;
            };
            let list = match role {
                TorchRole::Trains => {
                    self.training
                        .get_or_insert_with(|| (name, shown.to_string()));
                    continue;
                }
                TorchRole::Data => &mut self.data,
                TorchRole::Tensors => &mut self.tensors,
            };
            if !list.contains(&name) {
                list.push(name);
            }
        }
        if imports_torch && code.contains(".backward(") {
            self.training
                .get_or_insert_with(|| (".backward()".to_string(), shown.to_string()));
        }
    }

    /// The framework that trains, the file that says so, and why.
    fn decide(self) -> Imports {
        let decided = |framework: Framework, file: String, reason: String| Imports {
            framework: Some(framework),
            file: Some(file),
            reason,
        };
        match (self.torch_file, self.jax_file) {
            (Some(torch_file), None) => decided(
                Framework::Torch,
                torch_file.clone(),
                format!("The experiment imports PyTorch ({torch_file})"),
            ),
            (None, Some(jax_file)) => decided(
                Framework::Jax,
                jax_file.clone(),
                format!("The experiment imports JAX ({jax_file})"),
            ),
            (Some(torch_file), Some(jax_file)) => match self.training {
                Some((name, file)) => decided(
                    Framework::Torch,
                    file.clone(),
                    format!(
                        "The experiment imports PyTorch ({torch_file}) and JAX ({jax_file}) and trains with PyTorch ({name} in {file})"
                    ),
                ),
                None => {
                    let mut helps = Vec::new();
                    if !self.data.is_empty() {
                        helps.push(format!("data and logging ({})", few(&self.data)));
                    }
                    if !self.tensors.is_empty() {
                        helps.push(format!("tensor helpers ({})", few(&self.tensors)));
                    }
                    let helps = if helps.is_empty() {
                        "nothing it trains with".to_string()
                    } else {
                        helps.join(" and ")
                    };
                    let torch = if torch_file == jax_file {
                        "torch".to_string()
                    } else {
                        format!("torch ({torch_file})")
                    };
                    decided(
                        Framework::Jax,
                        jax_file.clone(),
                        format!(
                            "The experiment trains with JAX ({} in {jax_file}); it uses {torch} only for {helps}, never torch.nn or torch.optim",
                            self.jax.join(", ")
                        ),
                    )
                }
            },
            (None, None) => Imports {
                framework: None,
                file: None,
                reason: "The experiment imports neither framework".to_string(),
            },
        }
    }
}

/// The first names of a list, `…` standing for the rest.
fn few(names: &[String]) -> String {
    const SHOWN: usize = 4;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(", …");
    }
    text
}

/// The framework of the experiment whose entry is `entry` (a script or a notebook) in
/// `repo`: its imports and the top-level imports of the repository's modules it imports;
/// when none of them names a framework, the imports inside those modules' functions.
pub fn of_experiment(repo: &Path, entry: &Path) -> Imports {
    let mut queue = vec![entry.to_path_buf()];
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut evidence = Evidence::default();
    // Every import, a module's function bodies included: what decides when no file's top
    // level names a framework (a model that imports JAX inside the function building it).
    let mut with_functions = Evidence::default();
    while let Some(file) = queue.pop() {
        if seen.len() >= MAX_FILES || !seen.insert(file.clone()) {
            continue;
        }
        let shown = file
            .strip_prefix(repo)
            .unwrap_or(&file)
            .display()
            .to_string();
        let Some(code) = python_code(&file) else {
            continue;
        };
        let imports = file_imports(&code, file != entry);
        evidence.add(&shown, &code, &imports);
        with_functions.add(&shown, &code, &file_imports(&code, false));
        let folder = file.parent().unwrap_or(repo);
        for path in &imports.paths {
            queue.extend(local_files(path, [folder, repo]));
        }
    }
    match evidence.decide() {
        Imports {
            framework: None, ..
        } => with_functions.decide(),
        decided => decided,
    }
}

/// The repository's own files an import of the dotted `path` reads, in `dirs`: each
/// package on the way (`a/__init__.py`) and the module (`a/b.py`); none for a framework's.
fn local_files<'a>(path: &'a str, dirs: [&'a Path; 2]) -> impl Iterator<Item = PathBuf> + 'a {
    let parts: Vec<&str> = path.split('.').collect();
    let framework = parts.first().is_some_and(|top| {
        [Framework::Torch, Framework::Jax]
            .iter()
            .any(|f| f.family().iter().any(|l| l.module == *top))
    });
    let depth = if framework { 0 } else { parts.len() };
    dirs.into_iter().flat_map(move |dir| {
        let parts = parts.clone();
        (1..=depth).flat_map(move |n| {
            let local = parts[..n]
                .iter()
                .fold(dir.to_path_buf(), |p, part| p.join(part));
            [local.with_extension("py"), local.join("__init__.py")]
                .into_iter()
                .filter(|p| p.is_file())
        })
    })
}

/// The Python code of a file (a notebook's code cells).
fn python_code(file: &Path) -> Option<String> {
    let name = file.to_string_lossy();
    // A notebook carries its outputs (pictures among them): it is read whatever its size.
    let text = if crate::notebook::is_notebook(&name) {
        std::fs::read_to_string(file).ok()
    } else {
        crate::source_text::read_small(file)
    }?;
    Some(crate::notebook::python_code(&name, &text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_imports_of_the_entry_and_its_own_modules_decide() {
        let jax = repo(&[
            ("train.py", "import numpy as np\nfrom model import Net\n"),
            ("model.py", "import os, equinox as eqx\n"),
        ]);
        let found = of_experiment(jax.path(), &jax.path().join("train.py"));
        assert_eq!(found.framework, Some(Framework::Jax));
        assert_eq!(found.file.as_deref(), Some("model.py"));

        let torch = repo(&[
            ("train.py", "def main():\n    import torch\n"),
            ("utils.py", "import jax\n"),
        ]);
        let found = of_experiment(torch.path(), &torch.path().join("train.py"));
        assert_eq!(found.framework, Some(Framework::Torch));

        let both = repo(&[("train.py", "import jax\nimport torch.nn as nn\n")]);
        let found = of_experiment(both.path(), &both.path().join("train.py"));
        assert_eq!(found.framework, Some(Framework::Torch));

        let neither = repo(&[("train.py", "import numpy\n")]);
        let found = of_experiment(neither.path(), &neither.path().join("train.py"));
        assert_eq!(found.framework, None);
    }

    #[test]
    fn jax_that_uses_torch_only_for_data_and_logging_is_jax() {
        // Equinox's MNIST notebook: torchvision loads the data, JAX and optax train.
        let notebook = serde_json::json!({
            "cells": [
                {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,
                 "source": ["import equinox as eqx\n", "import jax\n", "import optax  # https://github.com/deepmind/optax\n",
                            "import torch  # https://pytorch.org\n", "import torchvision  # https://pytorch.org\n"]},
                {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,
                 "source": ["train_dataset = torchvision.datasets.MNIST('MNIST', train=True,\n",
                            "    transform=torchvision.transforms.ToTensor())\n",
                            "trainloader = torch.utils.data.DataLoader(train_dataset, batch_size=64)\n"]}
            ],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5
        });
        let dir = repo(&[("docs/examples/mnist.ipynb", &notebook.to_string())]);
        let (migration, reason) = choose(
            None,
            dir.path(),
            Some(&dir.path().join("docs/examples/mnist.ipynb")),
        );
        assert_eq!(migration.from, Framework::Jax);
        assert_eq!(
            reason,
            "The experiment trains with JAX (equinox, jax, optax in docs/examples/mnist.ipynb); \
             it uses torch only for data and logging \
             (torchvision.datasets, torchvision.transforms, torch.utils.data), never torch.nn or \
             torch.optim; `--from` overrides."
        );

        // CleanRL's DQN: tensorboard from torch; the replay buffer of the repository's own
        // package (off the entry's folder) makes torch tensors with `th`.
        let rl = repo(&[
            (
                "cleanrl/dqn_jax.py",
                "import flax.linen as nn\nimport jax\nimport optax\n\
                 from torch.utils.tensorboard import SummaryWriter\n\
                 from cleanrl_utils.buffers import ReplayBuffer\n\
                 q = nn.Dense(4)\n",
            ),
            ("cleanrl_utils/__init__.py", ""),
            (
                "cleanrl_utils/buffers.py",
                "import numpy as np\nimport torch as th\n\
                 def to_torch(a) -> th.Tensor:\n    return th.as_tensor(a, device=th.device('cpu'))\n",
            ),
        ]);
        let found = of_experiment(rl.path(), &rl.path().join("cleanrl/dqn_jax.py"));
        assert_eq!(found.framework, Some(Framework::Jax));
        assert_eq!(found.file.as_deref(), Some("cleanrl/dqn_jax.py"));
        assert!(
            found
                .reason
                .contains("(flax, jax, optax in cleanrl/dqn_jax.py)")
                && found.reason.contains(
                    "only for data and logging (torch.utils.tensorboard) and tensor helpers \
                     (torch.Tensor, torch.as_tensor, torch.device)"
                ),
            "{}",
            found.reason
        );

        // The same files training with torch.optim, or calling backward, are PyTorch's.
        for (training, named) in [
            ("opt = th.optim.Adam(params)\n", "torch.optim"),
            ("from torch import nn\n", "torch.nn"),
            ("loss.backward()\n", ".backward()"),
        ] {
            let buffers = format!("import torch as th\n{training}");
            let dir = repo(&[
                ("train.py", "import optax\nimport buffers\n"),
                ("buffers.py", &buffers),
            ]);
            let found = of_experiment(dir.path(), &dir.path().join("train.py"));
            assert_eq!(found.framework, Some(Framework::Torch), "{training}");
            assert_eq!(found.file.as_deref(), Some("buffers.py"));
            assert!(
                found
                    .reason
                    .ends_with(&format!("trains with PyTorch ({named} in buffers.py)")),
                "{}",
                found.reason
            );
        }
    }

    #[test]
    fn imports_are_read_with_their_paths_and_names() {
        let code = "from torch.utils.data import (\n    DataLoader,  # batches\n    Dataset as DS,\n)\n\
                    import torch.nn as nn, numpy\nfrom . import helpers\nfrom jax import *\n";
        let imports = file_imports(code, false);
        assert_eq!(
            imports.paths,
            [
                "torch.utils.data.DataLoader",
                "torch.utils.data.Dataset",
                "torch.nn",
                "numpy",
                "helpers",
                "jax"
            ]
        );
        assert!(
            imports
                .bindings
                .contains(&("DS".to_string(), "torch.utils.data.Dataset".to_string()))
        );
        assert!(
            imports
                .bindings
                .contains(&("nn".to_string(), "torch.nn".to_string()))
        );
        assert!(
            imports
                .bindings
                .contains(&("numpy".to_string(), "numpy".to_string()))
        );
        assert_eq!(
            torch_role("torch.nn.functional.relu").map(|r| r.0),
            Some(TorchRole::Trains)
        );
        assert_eq!(
            torch_role("lightning.Trainer").map(|r| r.0),
            Some(TorchRole::Trains)
        );
        assert_eq!(
            torch_role("torchvision.datasets.MNIST"),
            Some((TorchRole::Data, "torchvision.datasets".to_string()))
        );
        assert_eq!(
            torch_role("torch.utils.data.DataLoader"),
            Some((TorchRole::Data, "torch.utils.data".to_string()))
        );
        assert_eq!(
            torch_role("torch.as_tensor"),
            Some((TorchRole::Tensors, "torch.as_tensor".to_string()))
        );
        // `torchvisionx` is not torchvision, `nnx` is not nn.
        assert_eq!(torch_role("torchvisionx.data"), None);
        assert_eq!(
            torch_role("torch.nnx").map(|r| r.0),
            Some(TorchRole::Tensors)
        );
    }

    #[test]
    fn a_module_it_imports_counts_its_top_level_imports_only() {
        // CleanRL's `cleanrl_utils/evals/__init__.py` imports each algorithm in a function.
        let dir = repo(&[
            (
                "train.py",
                "import optax\ndef main():\n    from evals.jax_eval import evaluate\n",
            ),
            (
                "evals/__init__.py",
                "def c51():\n    import evals.torch_eval\n    if True:\n        import torch.nn\n",
            ),
            (
                "evals/jax_eval.py",
                "try:\n    import jax\nexcept ImportError:\n    jax = None\n",
            ),
            ("evals/torch_eval.py", "import torch.nn\n"),
        ]);
        let found = of_experiment(dir.path(), &dir.path().join("train.py"));
        assert_eq!(found.framework, Some(Framework::Jax));
        assert_eq!(found.reason, "The experiment imports JAX (train.py)");
        assert!(in_function(
            "x = 1\ndef f():\n    if a:\n        import b\n",
            30
        ));
        assert!(!in_function("try:\n    import b\nexcept E:\n    pass\n", 5));
    }

    #[test]
    fn a_notebook_is_read_by_its_code_cells() {
        let notebook = serde_json::json!({
            "cells": [
                {"cell_type": "markdown", "metadata": {}, "source": ["import torch is what we do not do"]},
                {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,
                 "source": ["import diffrax\n", "import jax.numpy as jnp\n"]}
            ],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5
        });
        let dir = repo(&[("docs/neural_cde.ipynb", &notebook.to_string())]);
        let found = of_experiment(dir.path(), &dir.path().join("docs/neural_cde.ipynb"));
        assert_eq!(found.framework, Some(Framework::Jax));
        assert_eq!(found.file.as_deref(), Some("docs/neural_cde.ipynb"));
    }
}
