//! The direction of a migration (SPEC §2c): the framework of the source repository and the
//! framework of the port, and what follows from them (the integrity defaults, the names the
//! prompt, panes and reports show). Every place that names a framework asks [`Migration`].

use serde::{Deserialize, Deserializer, Serialize};

use super::located;

/// A machine-learning framework a task migrates from or to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, strum::VariantArray,
)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    /// PyTorch (`torch`).
    Torch,
    /// JAX (`jax`).
    Jax,
}

/// A library of a framework's family: the module code imports and the distribution that
/// installs it (`dm-haiku` installs `haiku`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Library {
    /// The top-level module code imports.
    pub module: &'static str,
    /// The distribution (package) name that installs it.
    pub distribution: &'static str,
}

const fn library(module: &'static str, distribution: &'static str) -> Library {
    Library {
        module,
        distribution,
    }
}

/// JAX and the libraries built on it: the one list of the JAX family. A port to PyTorch may
/// import none of them, and `init` leaves them out of a PyTorch side's environment.
/// `jaxtyping` is among them: it annotates PyTorch tensors too, but importing it imports JAX
/// when it can (docs/INTEGRITY.md).
const JAX_FAMILY: &[Library] = &[
    library("jax", "jax"),
    library("jaxlib", "jaxlib"),
    library("jaxtyping", "jaxtyping"),
    library("flax", "flax"),
    library("optax", "optax"),
    library("equinox", "equinox"),
    library("diffrax", "diffrax"),
    library("haiku", "dm-haiku"),
    library("chex", "chex"),
    library("orbax", "orbax-checkpoint"),
    library("lineax", "lineax"),
    library("optimistix", "optimistix"),
    library("distrax", "distrax"),
    library("jaxopt", "jaxopt"),
    library("numpyro", "numpyro"),
    library("blackjax", "blackjax"),
    library("jraph", "jraph"),
    library("rlax", "rlax"),
    library("objax", "objax"),
    library("trax", "trax"),
    library("penzai", "penzai"),
];

/// PyTorch and the libraries built on it: `init` leaves them out of a JAX side's environment.
/// A port to JAX may not import `torch` (each of the others imports it).
const TORCH_FAMILY: &[Library] = &[
    library("torch", "torch"),
    library("torchvision", "torchvision"),
    library("torchaudio", "torchaudio"),
    library("torchtext", "torchtext"),
    library("torchmetrics", "torchmetrics"),
    library("pytorch_lightning", "pytorch-lightning"),
    library("lightning", "lightning"),
    library("triton", "triton"),
];

/// The modules a port to JAX may not import.
const TORCH_MODULES: &[&str] = &["torch"];

/// The modules of [`JAX_FAMILY`], in its order.
static JAX_MODULES: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| JAX_FAMILY.iter().map(|l| l.module).collect());

impl<'de> Deserialize<'de> for Framework {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        located::one_of(d, &[("torch", Framework::Torch), ("jax", Framework::Jax)])
    }
}

impl Framework {
    /// The name written in task files, results and the journal: `torch` or `jax`.
    pub fn as_str(self) -> &'static str {
        match self {
            Framework::Torch => "torch",
            Framework::Jax => "jax",
        }
    }

    /// The framework's own name, as people write it: `PyTorch` or `JAX`.
    pub fn name(self) -> &'static str {
        match self {
            Framework::Torch => "PyTorch",
            Framework::Jax => "JAX",
        }
    }

    /// The other framework.
    pub fn other(self) -> Framework {
        match self {
            Framework::Torch => Framework::Jax,
            Framework::Jax => Framework::Torch,
        }
    }

    /// Its top-level module (`torch`, `jax`): a port to it must import it.
    pub fn module(self) -> &'static str {
        self.as_str()
    }

    /// The modules of the framework and its libraries: a port away from it may not import
    /// any of them.
    pub fn modules(self) -> &'static [&'static str] {
        match self {
            Framework::Torch => TORCH_MODULES,
            Framework::Jax => JAX_MODULES.as_slice(),
        }
    }

    /// The framework and its libraries, as modules and distributions.
    pub fn family(self) -> &'static [Library] {
        match self {
            Framework::Torch => TORCH_FAMILY,
            Framework::Jax => JAX_FAMILY,
        }
    }

    /// Whether the distribution `name` (normalised: lowercase, `-` for `_`) installs the
    /// framework or a library of its family; for JAX a `jax` prefix counts too (`jax-cuda12-plugin`).
    pub fn owns_distribution(self, name: &str) -> bool {
        self.family().iter().any(|l| l.distribution == name)
            || (self == Framework::Jax && name.starts_with("jax"))
    }

    /// The framework of code that imports `modules`: PyTorch when torch is among them, JAX
    /// when JAX or a library of it is and torch is not, None when neither is.
    pub fn of_modules<S: AsRef<str>>(modules: &[S]) -> Option<Framework> {
        let any = |framework: Framework| {
            modules
                .iter()
                .any(|m| framework.modules().contains(&m.as_ref()))
        };
        if any(Framework::Torch) {
            Some(Framework::Torch)
        } else if any(Framework::Jax) {
            Some(Framework::Jax)
        } else {
            None
        }
    }

    /// Modules a port to this framework runs on, which a file of the port must not shadow.
    pub fn runtime_modules(self) -> &'static [&'static str] {
        match self {
            Framework::Torch => &["torch"],
            Framework::Jax => &["jax", "jaxlib"],
        }
    }

    /// What the port is written for, for the prompt.
    pub fn target_note(self) -> &'static str {
        match self {
            Framework::Torch => {
                "PyTorch, written to run on NVIDIA GPUs; on this machine PyTorch runs on CPU"
            }
            Framework::Jax => {
                "JAX (with optax/flax as needed), written to run on TPU; on this machine JAX runs on CPU"
            }
        }
    }
}

/// `[migration]` as written: either side may be left out (SPEC §2c).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigrationSpec {
    /// The source repository's framework.
    pub from: Option<Framework>,
    /// The port's framework.
    pub to: Option<Framework>,
}

impl MigrationSpec {
    /// The direction it says: a side left out is the other of the side given, both left out
    /// is PyTorch to JAX. Both sides the same is the caller's error to report.
    pub fn resolve(self) -> Migration {
        match (self.from, self.to) {
            (Some(from), Some(to)) => Migration { from, to },
            (Some(from), None) => Migration {
                from,
                to: from.other(),
            },
            (None, Some(to)) => Migration {
                from: to.other(),
                to,
            },
            (None, None) => Migration::default(),
        }
    }
}

/// The direction of a migration: `repo/` is in `from`'s framework, the port in `to`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Migration {
    /// The source repository's framework.
    pub from: Framework,
    /// The port's framework.
    pub to: Framework,
}

impl Default for Migration {
    /// PyTorch to JAX, the direction of every task that says none.
    fn default() -> Self {
        Migration {
            from: Framework::Torch,
            to: Framework::Jax,
        }
    }
}

impl Migration {
    /// `[integrity] forbid_imports` when the task leaves it out: the source's framework and
    /// its libraries.
    pub fn default_forbid_imports(self) -> Vec<String> {
        self.from.modules().iter().map(|m| m.to_string()).collect()
    }

    /// `[integrity] require_imports` when the task leaves it out: the port's framework.
    pub fn default_require_imports(self) -> Vec<String> {
        vec![self.to.module().to_string()]
    }

    /// `PyTorch → JAX`.
    pub fn label(self) -> String {
        format!("{} → {}", self.from.name(), self.to.name())
    }

    /// `PyTorch ↔ JAX`: the source on the left, the port on the right, as the Diff pane and
    /// `xstack diff` show them.
    pub fn sides(self) -> String {
        format!("{} ↔ {}", self.from.name(), self.to.name())
    }

    /// `torch→jax`: the short form the bench report's direction column shows.
    pub fn short(self) -> String {
        format!("{}→{}", self.from.as_str(), self.to.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_left_out_is_the_other_of_the_side_given() {
        let jax_source = MigrationSpec {
            from: Some(Framework::Jax),
            to: None,
        };
        assert_eq!(jax_source.resolve().to, Framework::Torch);
        let to_jax = MigrationSpec {
            from: None,
            to: Some(Framework::Jax),
        };
        assert_eq!(to_jax.resolve(), Migration::default());
        assert_eq!(MigrationSpec::default().resolve(), Migration::default());
    }

    #[test]
    fn one_family_list_gives_both_the_modules_a_port_may_not_import_and_the_distributions_init_leaves_out()
     {
        let mut checked = 0;
        for library in Framework::Jax.family() {
            assert!(Framework::Jax.modules().contains(&library.module));
            assert!(Framework::Jax.owns_distribution(library.distribution));
            assert!(!Framework::Torch.owns_distribution(library.distribution));
            checked += 1;
        }
        assert_eq!(checked, Framework::Jax.modules().len());
        assert!(Framework::Jax.owns_distribution("dm-haiku"));
        assert!(Framework::Jax.owns_distribution("jraph"));
        assert!(Framework::Jax.owns_distribution("jax-cuda12-plugin"));
        assert!(!Framework::Jax.owns_distribution("haiku"));
        assert!(Framework::Torch.owns_distribution("torchvision"));
        assert!(!Framework::Torch.owns_distribution("numpy"));
        assert_eq!(Framework::Torch.modules(), ["torch"]);
    }

    #[test]
    fn integrity_defaults_follow_the_direction() {
        let back = Migration {
            from: Framework::Jax,
            to: Framework::Torch,
        };
        assert_eq!(back.default_require_imports(), ["torch"]);
        let forbidden = back.default_forbid_imports();
        for module in [
            "jax", "jaxlib", "flax", "optax", "equinox", "diffrax", "haiku",
        ] {
            assert!(forbidden.iter().any(|m| m == module), "{module}");
        }
        assert!(forbidden.iter().any(|m| m == "jaxtyping"));
        assert_eq!(Migration::default().default_forbid_imports(), ["torch"]);
        assert_eq!(Migration::default().default_require_imports(), ["jax"]);
        assert_eq!(back.label(), "JAX → PyTorch");
        assert_eq!(
            serde_json::to_string(&back).unwrap_or_default(),
            r#"{"from":"jax","to":"torch"}"#
        );
    }
}
