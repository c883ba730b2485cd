//! The reference environment from the repository's own files, for `xstack init`: its
//! requirements files (`requirements*.txt`, following `-r`), `setup.py`'s `install_requires`
//! (read with Python's `ast` by `deps.py`, never executed), `setup.cfg`, `pyproject.toml`
//! (`[project] dependencies`, Poetry's `[tool.poetry.dependencies]`) and `environment.yml`,
//! then the imports of the experiment (its script or notebook and the repository's modules
//! they import, transitively) that none of those lists provides, each import name mapped to
//! the package that provides it (`sklearn` → `scikit-learn`). Every package keeps where it
//! came from. `deps.py` also reports the lines of the experiment that need a GPU or fetch from
//! the network. Nothing of the repository is run or written.

use std::path::Path;
use std::process::{Command, Stdio};

use super::repo::{package_name, parse_requirements};

/// The reading script, given to `python3 -` on stdin.
const SCRIPT: &str = include_str!("deps.py");

/// Requirements files whose names say they are not the experiment's (`requirements-dev.txt`).
const NOT_THE_EXPERIMENT: &[&str] = &["dev", "test", "doc", "lint", "style", "ci"];

/// Conda packages that are not Python packages pip installs, or that the interpreter is.
const CONDA_ONLY: &[&str] = &[
    "python",
    "pip",
    "cudatoolkit",
    "cudnn",
    "pytorch-cuda",
    "cpuonly",
    "mkl",
    "nccl",
    "cuda",
    "cuda-toolkit",
    "libgcc",
    "setuptools",
    "wheel",
];

/// Import names whose package has another name (pip's name, and others that also provide the
/// module).
const IMPORT_PACKAGES: &[(&str, &[&str])] = &[
    ("sklearn", &["scikit-learn"]),
    ("PIL", &["pillow"]),
    ("yaml", &["pyyaml"]),
    (
        "cv2",
        &[
            "opencv-python",
            "opencv-python-headless",
            "opencv-contrib-python",
        ],
    ),
    ("skimage", &["scikit-image"]),
    ("bs4", &["beautifulsoup4"]),
    ("attr", &["attrs"]),
    ("dateutil", &["python-dateutil"]),
    ("dotenv", &["python-dotenv"]),
    ("jwt", &["pyjwt"]),
    ("Crypto", &["pycryptodome"]),
    ("serial", &["pyserial"]),
    ("OpenGL", &["pyopengl"]),
    ("fitz", &["pymupdf"]),
    ("hydra", &["hydra-core"]),
    ("mpl_toolkits", &["matplotlib"]),
    ("google", &["protobuf"]),
    ("lightning", &["lightning", "pytorch-lightning"]),
    ("pytorch_lightning", &["pytorch-lightning", "lightning"]),
    ("tensorboardX", &["tensorboardx"]),
    ("Levenshtein", &["levenshtein", "python-levenshtein"]),
    ("gym", &["gym", "gymnasium"]),
    ("jaxlib", &["jaxlib", "jax"]),
    ("torch_geometric", &["torch-geometric"]),
    ("sentencepiece", &["sentencepiece"]),
    ("magic", &["python-magic"]),
    ("docx", &["python-docx"]),
    ("git", &["gitpython"]),
    ("zmq", &["pyzmq"]),
    ("Bio", &["biopython"]),
    ("rdkit", &["rdkit"]),
    ("umap", &["umap-learn"]),
    ("faiss", &["faiss-cpu"]),
    ("haiku", &["dm-haiku"]),
    ("tree", &["dm-tree"]),
];

/// Conda package names that pip knows by another name.
const CONDA_NAMES: &[(&str, &str)] = &[("pytorch", "torch"), ("pytorch-cpu", "torch")];

/// One package of the reference environment and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// As pip takes it (`torch>=2.1`, `numpy`).
    pub spec: String,
    /// Where it came from: `setup.py install_requires`, `imported by mingpt/utils.py:7`.
    pub from: String,
}

impl Requirement {
    /// The distribution's name, lowercase with `-` (`scikit-learn`).
    pub fn name(&self) -> String {
        package_name(&self.spec)
    }

    /// Whether its version is pinned below something (`==`, `<`, `<=`, `~=`, `===`): a pin
    /// that may have no build for this Python.
    pub fn is_pinned(&self) -> bool {
        let rest = &self.spec[self.name().len().min(self.spec.len())..];
        rest.contains("==") || rest.contains('<') || rest.contains("~=")
    }

    /// The same package without a version (`torch==1.4.0` → `torch`), extras kept.
    pub fn relaxed(&self) -> String {
        let end = self
            .spec
            .find(|c: char| "=<>!~ ;".contains(c))
            .unwrap_or(self.spec.len());
        self.spec[..end].trim().to_string()
    }
}

/// What kind of thing a CPU machine without network cannot do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HazardKind {
    /// Code that assumes a GPU (`.cuda()`, a `"cuda"` or `"cuda:"+str(args.dev)` device).
    Gpu,
    /// Code that fetches from the network at run time (`urlopen`, `download=True`).
    Network,
}

/// A line of the experiment that needs a GPU or the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hazard {
    /// What it needs.
    pub kind: HazardKind,
    /// `train.py:12` or `demo.ipynb#cell=3 line 2`.
    pub at: String,
    /// The line, trimmed.
    pub line: String,
}

/// What the repository says the experiment needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Needs {
    /// The packages, declared ones first (in the order of the files above), then the imports
    /// no file declares.
    pub requirements: Vec<Requirement>,
    /// Lines left out of requirements files (pip options), and what could not be read.
    pub notes: Vec<String>,
    /// Lines that need a GPU or the network.
    pub hazards: Vec<Hazard>,
    /// The Python that read them (`3.11`), when it ran.
    pub python: Option<String>,
    /// The repository's own packages the experiment imports (see [`OwnPackage`]).
    pub own: Vec<OwnPackage>,
    /// The third-party modules the experiment imports (top-level names), whether a file
    /// declares their packages or not.
    pub imported: Vec<String>,
    /// The distribution `pyproject.toml` names, when it is one of those packages: a run
    /// that imports it from the repository can still ask for its version.
    pub own_distribution: Option<Distribution>,
}

/// A distribution's name and version (`pyproject.toml`'s `[project]`), as
/// `importlib.metadata` finds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distribution {
    /// Its name (`diffrax`).
    pub name: String,
    /// Its version (`0.7.2`; `0` where the version is computed at build time).
    pub version: String,
}

impl Needs {
    /// The packages as pip takes them.
    pub fn specs(&self) -> Vec<String> {
        self.requirements.iter().map(|r| r.spec.clone()).collect()
    }
}

/// A package of the repository's own that the experiment imports and cannot import from its
/// own folder (diffrax's `docs/examples/latent_ode.ipynb` importing `diffrax`, pygcn's
/// `pygcn/train.py` importing `pygcn.utils`): the run imports it from the repository, never
/// a same-named package from the registry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct OwnPackage {
    /// The top-level module (`diffrax`).
    pub module: String,
    /// Where the experiment imports it (`docs/examples/latent_ode.ipynb#cell=2 line 3`).
    pub at: String,
    /// The folder of the repository that holds it: `.` or `src`.
    pub root: String,
}

impl Needs {
    /// The `[env] setup` line that lets every run import the repository's own packages from
    /// its copy of the repository (the run's working folder): the folder that holds them put
    /// first on PYTHONPATH; None when the experiment imports none.
    /// With the package's distribution known (`pyproject.toml`), its metadata is written
    /// beside the copy (`.xstack/dist/NAME-VERSION.dist-info`, left out of the diff and the
    /// verify copy) and put on the path too, so that `importlib.metadata.version("diffrax")`
    /// in the package's `__init__` finds the version the repository declares.
    pub fn own_packages_setup(&self) -> Option<String> {
        let root = &self.own.first()?.root;
        let folder = if root == "." {
            "$PWD".to_string()
        } else {
            format!("$PWD/{root}")
        };
        let Some(dist) = &self.own_distribution else {
            return Some(format!(
                "export PYTHONPATH=\"{folder}${{PYTHONPATH:+:$PYTHONPATH}}\""
            ));
        };
        let info = format!("$PWD/.xstack/dist/{}-{}.dist-info", dist.name, dist.version);
        Some(format!(
            "mkdir -p \"{info}\" && printf 'Metadata-Version: 2.1\\nName: {}\\nVersion: {}\\n' > \"{info}/METADATA\"\nexport PYTHONPATH=\"{folder}:$PWD/.xstack/dist${{PYTHONPATH:+:$PYTHONPATH}}\"",
            dist.name, dist.version
        ))
    }

    /// The repository's own packages in words, for the user and the task's comment.
    pub fn own_packages_note(&self) -> Option<String> {
        if self.own.is_empty() {
            return None;
        }
        let named: Vec<String> = self
            .own
            .iter()
            .map(|o| format!("`{}` (imported by {})", o.module, o.at))
            .collect();
        Some(format!(
            "the repository is the package its experiment imports, {}: every run imports it from its copy of the repository (PYTHONPATH), never a same-named package from the registry",
            named.join(", ")
        ))
    }
}

/// What `deps.py` prints.
#[derive(Debug, serde::Deserialize)]
struct ScriptOutput {
    setup_py: Option<Vec<String>>,
    #[serde(default)]
    own: Vec<OwnPackage>,
    imports: Vec<ScriptImport>,
    hazards: Vec<ScriptHazard>,
    notes: Vec<String>,
    python: String,
}

#[derive(Debug, serde::Deserialize)]
struct ScriptImport {
    module: String,
    at: String,
}

#[derive(Debug, serde::Deserialize)]
struct ScriptHazard {
    kind: String,
    at: String,
    line: String,
}

/// Reads what the experiment needs from `repo`: its files' declared packages, and the imports
/// of `entries` (the script or notebook, relative to `repo`) that they do not provide.
pub fn read(repo: &Path, entries: &[String]) -> Needs {
    let mut needs = Needs::default();
    for (file, specs) in requirements_files(repo, &mut needs.notes) {
        add(&mut needs.requirements, specs, &file);
    }
    let script = run_script(repo, entries);
    let script = match script {
        Ok(out) => Some(out),
        Err(why) => {
            needs.notes.push(why);
            None
        }
    };
    if let Some(specs) = script.as_ref().and_then(|s| s.setup_py.clone()) {
        add(&mut needs.requirements, specs, "setup.py install_requires");
    }
    if let Some(specs) = setup_cfg(repo) {
        add(&mut needs.requirements, specs, "setup.cfg install_requires");
    }
    for (specs, from) in pyproject(repo) {
        add(&mut needs.requirements, specs, from);
    }
    if let Some(specs) = environment_yml(repo) {
        add(&mut needs.requirements, specs, "environment.yml");
    }
    if let Some(out) = script {
        for import in &out.imports {
            let provided_by = packages_of(&import.module);
            let declared = needs
                .requirements
                .iter()
                .any(|r| provided_by.contains(&r.name()));
            if !declared && let Some(first) = provided_by.first() {
                needs.requirements.push(Requirement {
                    spec: first.clone(),
                    from: format!("imported by {}", import.at),
                });
            }
        }
        needs.hazards = out
            .hazards
            .into_iter()
            .map(|h| Hazard {
                kind: if h.kind == "gpu" {
                    HazardKind::Gpu
                } else {
                    HazardKind::Network
                },
                at: h.at,
                line: h.line,
            })
            .collect();
        needs.notes.extend(out.notes);
        needs.python = Some(out.python);
        needs.imported = out
            .imports
            .iter()
            .filter_map(|i| i.module.split('.').next())
            .map(str::to_string)
            .collect();
        let own: Vec<String> = out.own.iter().map(|o| package_name(&o.module)).collect();
        let (registry, dropped): (Vec<Requirement>, Vec<Requirement>) =
            std::mem::take(&mut needs.requirements)
                .into_iter()
                .partition(|r| !own.contains(&r.name()));
        needs.requirements = registry;
        for r in dropped {
            needs.notes.push(format!(
                "{} ({}) left out: it is the repository's own package, imported from the repository",
                r.spec, r.from
            ));
        }
        needs.own = out.own;
        needs.own_distribution =
            project_distribution(repo).filter(|dist| own.contains(&package_name(&dist.name)));
    }
    needs
}

/// The distribution `pyproject.toml`'s `[project]` names, with its version (`0` where the
/// version is `dynamic`); None without one, or with a name or version a shell line could
/// not carry as it is.
fn project_distribution(repo: &Path) -> Option<Distribution> {
    let text = std::fs::read_to_string(repo.join("pyproject.toml")).ok()?;
    let doc = toml::from_str::<toml::Table>(&text).ok()?;
    let project = doc.get("project")?;
    let name = project.get("name")?.as_str()?.to_string();
    let version = project
        .get("version")
        .and_then(toml::Value::as_str)
        .unwrap_or("0")
        .to_string();
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '!'))
    };
    (plain(&name) && plain(&version)).then_some(Distribution { name, version })
}

/// The packages that provide the module `module` (its top-level name), pip's name first.
pub fn packages_of(module: &str) -> Vec<String> {
    let top = module.split('.').next().unwrap_or(module);
    match IMPORT_PACKAGES.iter().find(|(m, _)| *m == top) {
        Some((_, packages)) => packages.iter().map(|p| (*p).to_string()).collect(),
        None => vec![package_name(top)],
    }
}

/// Adds the packages of one source, each once: a package already listed keeps its first
/// source.
fn add(list: &mut Vec<Requirement>, specs: Vec<String>, from: &str) {
    for spec in specs {
        let req = Requirement {
            spec,
            from: from.to_string(),
        };
        if req.name().is_empty() || list.iter().any(|r| r.name() == req.name()) {
            continue;
        }
        list.push(req);
    }
}

/// `requirements.txt`, then the other `requirements*.txt` at the top level whose names do
/// not say they are for development, tests or docs; `-r FILE` lines are followed.
fn requirements_files(repo: &Path, notes: &mut Vec<String>) -> Vec<(String, Vec<String>)> {
    let mut names: Vec<String> = std::fs::read_dir(repo)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let lower = n.to_lowercase();
            lower.starts_with("requirements")
                && lower.ends_with(".txt")
                && !NOT_THE_EXPERIMENT.iter().any(|w| lower.contains(w))
        })
        .collect();
    names.sort_by_key(|n| (n != "requirements.txt", n.clone()));
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for name in names {
        read_requirements(repo, &name, &mut out, &mut seen, notes);
    }
    out
}

fn read_requirements(
    repo: &Path,
    name: &str,
    out: &mut Vec<(String, Vec<String>)>,
    seen: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    if seen.iter().any(|s| s == name) {
        return;
    }
    seen.push(name.to_string());
    let Ok(text) = std::fs::read_to_string(repo.join(name)) else {
        notes.push(format!("{name}: cannot be read"));
        return;
    };
    let (list, skipped) = parse_requirements(&text);
    let list = list
        .into_iter()
        .map(|spec| match spec.strip_prefix("pytorch") {
            Some(rest) if package_name(&spec) == "pytorch" => {
                let torch = format!("torch{rest}");
                notes.push(format!(
                    "{name}: `{spec}` read as `{torch}` (PyPI's `pytorch` is a stub that refuses to install)"
                ));
                torch
            }
            _ => spec,
        })
        .collect();
    out.push((name.to_string(), list));
    for line in skipped {
        let included = line
            .strip_prefix("-r")
            .or_else(|| line.strip_prefix("--requirement"))
            .map(|r| r.trim_start_matches('=').trim());
        match included {
            Some(other) if !other.is_empty() => {
                let base = Path::new(name).parent().unwrap_or(Path::new(""));
                let path = base.join(other).to_string_lossy().replace('\\', "/");
                read_requirements(repo, &path, out, seen, notes);
            }
            _ => notes.push(format!("{name}: `{line}` left out (a pip option)")),
        }
    }
}

/// `setup.cfg`'s `[options] install_requires`, one requirement a line (or `;`-separated).
fn setup_cfg(repo: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(repo.join("setup.cfg")).ok()?;
    let mut section = String::new();
    let mut collecting = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            section = trimmed.to_string();
            collecting = false;
            continue;
        }
        if section != "[options]" {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if collecting && (indented || trimmed.is_empty()) {
            out.extend(cfg_values(trimmed));
            continue;
        }
        collecting = false;
        if let Some((key, value)) = trimmed.split_once('=')
            && key.trim() == "install_requires"
        {
            collecting = true;
            out.extend(cfg_values(value.trim()));
        }
    }
    (!out.is_empty()).then_some(out)
}

fn cfg_values(text: &str) -> Vec<String> {
    text.split(';')
        .next()
        .into_iter()
        .map(str::trim)
        .filter(|v| !v.is_empty() && !v.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// `pyproject.toml`'s `[project] dependencies` and Poetry's `[tool.poetry.dependencies]`
/// (without `python`; `^1.2` and `~1.2` read as `>=1.2`).
fn pyproject(repo: &Path) -> Vec<(Vec<String>, &'static str)> {
    let Ok(text) = std::fs::read_to_string(repo.join("pyproject.toml")) else {
        return Vec::new();
    };
    let Ok(doc) = toml::from_str::<toml::Table>(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(deps) = doc
        .get("project")
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_array())
    {
        let list = deps
            .iter()
            .filter_map(|d| d.as_str())
            .map(|d| d.split(';').next().unwrap_or("").trim().to_string())
            .filter(|d| !d.is_empty())
            .collect();
        out.push((list, "pyproject.toml [project] dependencies"));
    }
    if let Some(deps) = doc
        .get("tool")
        .and_then(|t| t.get("poetry"))
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_table())
    {
        let list = deps
            .iter()
            .filter(|(name, _)| name.as_str() != "python")
            .map(|(name, v)| {
                let version = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Table(t) => t
                        .get("version")
                        .and_then(|v| v.as_str())
                        .unwrap_or("*")
                        .to_string(),
                    _ => "*".to_string(),
                };
                poetry_spec(name, &version)
            })
            .collect();
        out.push((list, "pyproject.toml [tool.poetry.dependencies]"));
    }
    out
}

/// A Poetry dependency as pip takes it: `^1.2` and `~1.2` as `>=1.2`, `1.2` as `==1.2`,
/// `*` as the name alone.
fn poetry_spec(name: &str, version: &str) -> String {
    let v = version.trim();
    if v.is_empty() || v == "*" {
        name.to_string()
    } else if let Some(rest) = v.strip_prefix('^').or_else(|| v.strip_prefix('~')) {
        format!("{name}>={}", rest.trim_start_matches('='))
    } else if v.starts_with(|c: char| c.is_ascii_digit()) {
        format!("{name}=={v}")
    } else {
        format!("{name}{v}")
    }
}

/// `environment.yml`'s dependencies: conda's `name=1.2` as `name==1.2` (a channel prefix and
/// conda-only packages left out, `pytorch` as `torch`), and its `pip:` list as written.
fn environment_yml(repo: &Path) -> Option<Vec<String>> {
    let text = ["environment.yml", "environment.yaml"]
        .iter()
        .find_map(|f| std::fs::read_to_string(repo.join(f)).ok())?;
    let mut out = Vec::new();
    let mut in_deps = false;
    let mut pip_indent: Option<usize> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if indent == 0 {
            in_deps = trimmed == "dependencies:";
            pip_indent = None;
            continue;
        }
        if !in_deps {
            continue;
        }
        let Some(item) = trimmed.strip_prefix("- ") else {
            continue;
        };
        let item = item
            .split(" #")
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\'']);
        if let Some(p) = pip_indent {
            if indent > p {
                out.push(item.to_string());
                continue;
            }
            pip_indent = None;
        }
        if item == "pip:" {
            pip_indent = Some(indent);
            continue;
        }
        let item = item.rsplit("::").next().unwrap_or(item);
        let name_end = item
            .find(|c: char| "=<>! ".contains(c))
            .unwrap_or(item.len());
        let (name, version) = item.split_at(name_end);
        let name = CONDA_NAMES
            .iter()
            .find(|(conda, _)| *conda == name)
            .map_or(name, |(_, pip)| pip);
        if CONDA_ONLY.contains(&name) {
            continue;
        }
        let version = version.trim();
        let spec = match version.strip_prefix('=') {
            Some(v) if !v.starts_with('=') => {
                // conda's `=1.2` is pip's `==1.2.*`; a build string after a second `=` is
                // conda's own.
                let v = v.split('=').next().unwrap_or(v);
                format!("{name}=={v}")
            }
            _ => format!("{name}{version}"),
        };
        out.push(spec);
    }
    (!out.is_empty()).then_some(out)
}

/// Runs `deps.py` with the Python on PATH.
fn run_script(repo: &Path, entries: &[String]) -> Result<ScriptOutput, String> {
    let mut child = Command::new("python3")
        .arg("-")
        .arg(repo)
        .args(entries)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run python3 to read setup.py and the imports: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin
            .write_all(SCRIPT.as_bytes())
            .map_err(|e| format!("cannot give python3 the reading script: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("python3 reading setup.py and the imports: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("").to_string();
        return Err(format!(
            "setup.py and the imports were not read: python3 failed ({last})"
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("setup.py and the imports were not read: {e}"))
}

/// The names of the pinned requirements among `reqs` that the failed build's words name,
/// else every pinned one.
pub fn failing_pins<'a>(reqs: &'a [Requirement], build_output: &str) -> Vec<&'a Requirement> {
    let pinned: Vec<&Requirement> = reqs.iter().filter(|r| r.is_pinned()).collect();
    let lower = build_output.to_lowercase();
    let named: Vec<&Requirement> = pinned
        .iter()
        .copied()
        .filter(|r| {
            let name = r.name();
            lower.contains(&name) || lower.contains(&name.replace('-', "_"))
        })
        .collect();
    if named.is_empty() { pinned } else { named }
}

/// The requirement among `reqs` whose build from source the installer's output says failed
/// (uv: `Failed to build `pycairo==1.27.0``; pip: `Failed building wheel for pycairo`).
pub fn unbuildable<'a>(reqs: &'a [Requirement], build_output: &str) -> Option<&'a Requirement> {
    build_output
        .lines()
        .map(str::to_lowercase)
        .filter(|l| l.contains("failed to build") || l.contains("failed building wheel for"))
        .find_map(|line| {
            let words: Vec<String> = line
                .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
                .map(|w| w.replace('_', "-"))
                .collect();
            reqs.iter().find(|r| words.contains(&r.name()))
        })
}

/// The module a failed run could not import (`No module named 'numpy'` → `numpy`), from its
/// last lines.
pub fn missing_module(tail: &str) -> Option<String> {
    let at = tail.rfind("No module named ")?;
    let rest = &tail[at + "No module named ".len()..];
    let name: String = rest
        .trim_start_matches(['\'', '"'])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn listed(needs: &Needs) -> Vec<(String, String)> {
        needs
            .requirements
            .iter()
            .map(|r| (r.spec.clone(), r.from.clone()))
            .collect()
    }

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn setup_py_is_read_without_running_it_and_imports_fill_the_rest() {
        // minGPT's shape: setup.py declares torch, mingpt/utils.py imports numpy.
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        write(
            repo,
            "setup.py",
            "from setuptools import setup\nraise SystemExit('never run me')\nsetup(name='mingpt', install_requires=['torch'])\n",
        );
        write(repo, "mingpt/__init__.py", "");
        write(
            repo,
            "mingpt/utils.py",
            "import os, sys\nimport numpy as np\n",
        );
        write(
            repo,
            "mingpt/model.py",
            "import torch\nfrom mingpt.utils import CfgNode\n",
        );
        write(
            repo,
            "demo.ipynb",
            r#"{"cells": [{"cell_type": "code", "source": ["!pip install x\n", "from mingpt.model import GPT\n", "from PIL import Image\n"]},
                         {"cell_type": "code", "source": "try:\n    import wandb\nexcept ImportError:\n    wandb = None\nimport sklearn.metrics"}]}"#,
        );
        let needs = read(repo, &["demo.ipynb".to_string()]);
        assert_eq!(
            listed(&needs),
            pairs(&[
                ("torch", "setup.py install_requires"),
                ("pillow", "imported by demo.ipynb#cell=0 line 2"),
                ("scikit-learn", "imported by demo.ipynb#cell=1 line 5"),
                ("numpy", "imported by mingpt/utils.py:2"),
            ])
        );
        assert!(needs.python.is_some());
    }

    #[test]
    fn the_repositorys_own_package_comes_from_the_repository_not_the_registry() {
        // diffrax's shape: pyproject.toml names the package and its dependencies, the
        // notebook in docs/examples/ imports it; requirements.txt lists it as well (pygcn's
        // advice once added a same-named registry package).
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        write(
            repo,
            "pyproject.toml",
            "[project]\nname = \"diffrax\"\ndependencies = [\"jax>=0.4\", \"equinox\"]\n",
        );
        write(repo, "requirements.txt", "diffrax\n");
        write(
            repo,
            "diffrax/__init__.py",
            "from ._solve import diffeqsolve\n",
        );
        write(repo, "diffrax/_solve.py", "import jax\n");
        write(
            repo,
            "docs/examples/latent_ode.ipynb",
            r#"{"cells": [{"cell_type": "code", "source": ["import diffrax\n", "import optax\n"]}]}"#,
        );
        let needs = read(repo, &["docs/examples/latent_ode.ipynb".to_string()]);
        assert_eq!(
            listed(&needs),
            pairs(&[
                ("jax>=0.4", "pyproject.toml [project] dependencies"),
                ("equinox", "pyproject.toml [project] dependencies"),
                (
                    "optax",
                    "imported by docs/examples/latent_ode.ipynb#cell=0 line 2"
                ),
            ])
        );
        assert_eq!(
            needs.own,
            [OwnPackage {
                module: "diffrax".to_string(),
                at: "docs/examples/latent_ode.ipynb#cell=0 line 1".to_string(),
                root: ".".to_string(),
            }]
        );
        assert!(
            needs
                .notes
                .contains(&"diffrax (requirements.txt) left out: it is the repository's own package, imported from the repository".to_string()),
            "{:?}",
            needs.notes
        );
        assert_eq!(
            needs.own_distribution,
            Some(Distribution {
                name: "diffrax".to_string(),
                version: "0".to_string()
            }),
            "no version in [project]: the version is computed at build time"
        );
        // diffrax's __init__ asks for its own version: the setup line makes the metadata
        // the repository declares findable, and the package importable, in a real run.
        write(
            repo,
            "pyproject.toml",
            "[project]\nname = \"diffrax\"\nversion = \"0.7.2\"\ndependencies = [\"jax>=0.4\"]\n",
        );
        write(
            repo,
            "diffrax/__init__.py",
            "import importlib.metadata\n__version__ = importlib.metadata.version(\"diffrax\")\n",
        );
        let needs = read(repo, &["docs/examples/latent_ode.ipynb".to_string()]);
        let setup = needs.own_packages_setup().unwrap();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "set -e\n{setup}\ncd docs/examples && python3 -c 'import diffrax; print(diffrax.__version__, diffrax.__file__)'"
            ))
            .current_dir(repo)
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{setup}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expected_file = repo.join("diffrax/__init__.py");
        assert_eq!(
            printed.trim(),
            format!("0.7.2 {}", expected_file.display()),
            "{setup}"
        );
        // A src/ layout puts src/ on the path; a script beside its modules needs nothing.
        write(repo, "src/tinypkg/__init__.py", "");
        write(repo, "train.py", "import tinypkg\nimport helpers\n");
        write(repo, "helpers.py", "");
        let needs = read(repo, &["train.py".to_string()]);
        let own: Vec<(&str, &str)> = needs
            .own
            .iter()
            .map(|o| (o.module.as_str(), o.root.as_str()))
            .collect();
        assert_eq!(own, [("tinypkg", "src")]);
        assert_eq!(
            needs.own_packages_setup().as_deref(),
            Some("export PYTHONPATH=\"$PWD/src${PYTHONPATH:+:$PYTHONPATH}\"")
        );
    }

    /// ppnp's requirements.txt names PyPI's `pytorch`, a stub whose install fails.
    #[test]
    fn a_requirements_pytorch_is_read_as_torch() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "requirements.txt",
            "numpy\npytorch>=1.5\npytorch-lightning\n",
        );
        let needs = read(dir.path(), &[]);
        assert_eq!(
            needs.specs(),
            ["numpy", "torch>=1.5", "pytorch-lightning"],
            "{:?}",
            needs.notes
        );
        assert!(
            needs.notes.contains(&"requirements.txt: `pytorch>=1.5` read as `torch>=1.5` (PyPI's `pytorch` is a stub that refuses to install)".to_string()),
            "{:?}",
            needs.notes
        );
    }

    #[test]
    fn every_declaring_file_is_read_and_the_first_keeps_a_package() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        write(
            repo,
            "requirements.txt",
            "torch==2.3.0\n-r requirements-extra.txt\n--index-url https://x\n",
        );
        write(repo, "requirements-extra.txt", "einops\n");
        write(repo, "requirements-dev.txt", "pytest\n");
        write(
            repo,
            "setup.cfg",
            "[metadata]\nname = x\n[options]\ninstall_requires =\n    torch>=1.0\n    tqdm; python_version > '3'\npackages = find:\n",
        );
        write(
            repo,
            "pyproject.toml",
            "[tool.poetry.dependencies]\npython = \"^3.9\"\nscipy = \"^1.10\"\nrich = \"*\"\nhydra-core = { version = \"1.3.2\" }\n",
        );
        write(
            repo,
            "environment.yml",
            "name: x\nchannels:\n  - pytorch\ndependencies:\n  - python=3.9\n  - pytorch::pytorch=1.13.1=py3.9_cpu_0\n  - cudatoolkit=11.6\n  - pandas>=1.5\n  - pip\n  - pip:\n    - tensorboardX==2.6\nvariables:\n  A: b\n",
        );
        write(
            repo,
            "train.py",
            "import yaml\nimport scipy\nimport torch\n",
        );
        let needs = read(repo, &["train.py".to_string()]);
        assert_eq!(
            listed(&needs),
            pairs(&[
                ("torch==2.3.0", "requirements.txt"),
                ("einops", "requirements-extra.txt"),
                ("tqdm", "setup.cfg install_requires"),
                (
                    "hydra-core==1.3.2",
                    "pyproject.toml [tool.poetry.dependencies]"
                ),
                ("rich", "pyproject.toml [tool.poetry.dependencies]"),
                ("scipy>=1.10", "pyproject.toml [tool.poetry.dependencies]"),
                ("pandas>=1.5", "environment.yml"),
                ("tensorboardX==2.6", "environment.yml"),
                ("pyyaml", "imported by train.py:1"),
            ])
        );
        assert!(
            needs
                .notes
                .iter()
                .any(|n| n.contains("--index-url https://x")),
            "{:?}",
            needs.notes
        );
    }

    #[test]
    fn a_computed_install_requires_is_said_and_not_guessed() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "setup.py",
            "from setuptools import setup\nsetup(name='x',\n      install_requires=open('deps').read().split())\n",
        );
        let needs = read(dir.path(), &[]);
        assert!(needs.requirements.is_empty());
        assert!(
            needs
                .notes
                .iter()
                .any(|n| n.contains("setup.py:3: install_requires is computed")),
            "{:?}",
            needs.notes
        );
    }

    #[test]
    fn pins_relax_to_the_name_and_failing_ones_are_named() {
        let req = |spec: &str| Requirement {
            spec: spec.to_string(),
            from: "requirements.txt".to_string(),
        };
        let reqs = [
            req("torch==1.4.0"),
            req("numpy<1.20"),
            req("scipy>=1.0"),
            req("tqdm"),
        ];
        let pinned: Vec<bool> = reqs.iter().map(Requirement::is_pinned).collect();
        assert_eq!(pinned, [true, true, false, false]);
        assert_eq!(reqs[0].relaxed(), "torch");
        assert_eq!(req("uvicorn[standard]==0.1").relaxed(), "uvicorn[standard]");
        let uv = "× No solution found when resolving dependencies:\n╰─▶ Because torch==1.4.0 has no wheels with a matching Python ABI tag";
        let failing: Vec<&str> = failing_pins(&reqs, uv)
            .iter()
            .map(|r| r.spec.as_str())
            .collect();
        assert_eq!(failing, ["torch==1.4.0"]);
        assert_eq!(failing_pins(&reqs, "network down").len(), 2);
    }

    #[test]
    fn import_names_map_to_their_packages() {
        assert_eq!(packages_of("sklearn.metrics"), ["scikit-learn"]);
        assert_eq!(packages_of("PIL"), ["pillow"]);
        assert_eq!(packages_of("yaml"), ["pyyaml"]);
        assert_eq!(packages_of("cv2")[0], "opencv-python");
        assert_eq!(packages_of("skimage"), ["scikit-image"]);
        assert_eq!(packages_of("einops"), ["einops"]);
        // PyPI's `haiku` does not exist and `tree` is another project: DeepMind's are `dm-`.
        assert_eq!(packages_of("haiku"), ["dm-haiku"]);
        assert_eq!(packages_of("tree"), ["dm-tree"]);
        assert_eq!(
            missing_module(
                "  File \"x.py\", line 1\nModuleNotFoundError: No module named 'numpy.linalg'\n"
            ),
            Some("numpy.linalg".to_string())
        );
        assert_eq!(missing_module("all fine"), None);
    }

    #[test]
    fn the_package_whose_build_failed_is_named() {
        let reqs: Vec<Requirement> = ["numpy", "python-igraph", "pycairo"]
            .map(|spec| Requirement {
                spec: spec.to_string(),
                from: "environment.yml".to_string(),
            })
            .to_vec();
        let uv = "Resolved 40 packages\n  × Failed to build `pycairo==1.28.0`\n  ├─▶ The build backend returned an error\n  ╰─▶ Call to `mesonpy.build_wheel` failed (exit status: 1)\n      Dependency \"cairo\" not found";
        assert_eq!(
            unbuildable(&reqs, uv).map(|r| r.spec.as_str()),
            Some("pycairo")
        );
        let pip =
            "ERROR: Failed building wheel for python_igraph\nerror: subprocess-exited-with-error";
        assert_eq!(
            unbuildable(&reqs, pip).map(|r| r.spec.as_str()),
            Some("python-igraph")
        );
        assert_eq!(unbuildable(&reqs, "No solution found when resolving"), None);
    }

    #[test]
    fn gpu_and_network_lines_are_found() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "train.py",
            "import torch\nfrom data import load\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\nmodel = Net().cuda()\n# x.cuda()\n",
        );
        write(
            dir.path(),
            "data.py",
            "import urllib.request\ndef load():\n    return urllib.request.urlopen('http://127.0.0.1:1/x.csv')\nds = MNIST('.', download=True)\n",
        );
        let needs = read(dir.path(), &["train.py".to_string()]);
        let found: Vec<(HazardKind, &str)> = needs
            .hazards
            .iter()
            .map(|h| (h.kind, h.at.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (HazardKind::Gpu, "train.py:4"),
                (HazardKind::Network, "data.py:3"),
                (HazardKind::Network, "data.py:4"),
            ]
        );
    }

    /// ppnp's `load_dataset` is the repository's own function, reading its `.npz` files;
    /// Hugging Face's, imported from `datasets`, fetches from the Hub.
    #[test]
    fn only_hugging_faces_load_dataset_is_a_network_line() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "train.py",
            "from io_utils import load_dataset
import hub
graph = load_dataset('cora_ml')
",
        );
        write(
            dir.path(),
            "io_utils.py",
            "import numpy as np
def load_dataset(name):
    return np.load(name + '.npz')
",
        );
        write(
            dir.path(),
            "hub.py",
            "from datasets import load_dataset
text = load_dataset('tiny_shakespeare')
",
        );
        let needs = read(dir.path(), &["train.py".to_string()]);
        let found: Vec<(HazardKind, &str)> = needs
            .hazards
            .iter()
            .map(|h| (h.kind, h.at.as_str()))
            .collect();
        assert_eq!(found, [(HazardKind::Network, "hub.py:2")]);
    }

    /// GCNII's `train.py`: the device string is built from an option and handed to
    /// `torch.device` on the next line, with no `.cuda()` anywhere.
    #[test]
    fn a_cuda_device_string_is_a_gpu_line_and_a_comparison_is_not() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "train.py",
            "import torch
if args.device == 'cuda':
    pass
cudaid = \"cuda:\"+str(args.dev)
device = torch.device(cudaid)
features = features.to(device)
layer = nn.Linear(2, 2, device='cuda:0')
name = 'cudatoolkit'
",
        );
        let needs = read(dir.path(), &["train.py".to_string()]);
        let found: Vec<(HazardKind, &str, &str)> = needs
            .hazards
            .iter()
            .map(|h| (h.kind, h.at.as_str(), h.line.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    HazardKind::Gpu,
                    "train.py:4",
                    "cudaid = \"cuda:\"+str(args.dev)"
                ),
                (
                    HazardKind::Gpu,
                    "train.py:7",
                    "layer = nn.Linear(2, 2, device='cuda:0')"
                ),
            ]
        );
    }
}
