//! Where a framework's packages come from: per framework, `XSTACK_<FRAMEWORK>_INDEX_URL`
//! (uv's and pip's `--index-url`: replaces PyPI) and `XSTACK_<FRAMEWORK>_EXTRA_INDEX_URL`
//! (`--extra-index-url`: looked at before PyPI; several separated by spaces). They apply to an
//! environment whose package list holds one of the framework's packages, e.g.
//! `XSTACK_TORCH_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu` for PyTorch's CPU
//! wheels on a machine without a GPU.

/// The frameworks with an index of their own: the variable prefix and the packages that
/// select it.
const FRAMEWORKS: &[(&str, &[&str])] = &[
    ("TORCH", &["torch", "torchvision", "torchaudio"]),
    ("JAX", &["jax", "jaxlib"]),
];

/// The index arguments for an environment of `packages`, from the process's variables.
pub fn index_args(packages: &[String]) -> Vec<String> {
    index_args_from(packages, &|name| std::env::var(name).ok())
}

/// The index arguments for an environment of `packages`, the variables looked up in `var`.
pub fn index_args_from(packages: &[String], var: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let names: Vec<String> = packages
        .iter()
        .map(|p| {
            p.split(|c: char| "[<>=!~; @".contains(c))
                .next()
                .unwrap_or_default()
                .trim()
                .to_lowercase()
                .replace('_', "-")
        })
        .collect();
    let mut args = Vec::new();
    for (framework, members) in FRAMEWORKS {
        if !names.iter().any(|n| members.contains(&n.as_str())) {
            continue;
        }
        for (suffix, flag) in [
            ("INDEX_URL", "--index-url"),
            ("EXTRA_INDEX_URL", "--extra-index-url"),
        ] {
            let value = var(&format!("XSTACK_{framework}_{suffix}")).unwrap_or_default();
            for url in value.split_whitespace() {
                if !args.windows(2).any(|w| w[0] == flag && w[1] == url) {
                    args.push(flag.to_string());
                    args.push(url.to_string());
                }
            }
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_torch_environment_gets_the_torch_index_and_a_jax_one_does_not() {
        let set = vars(&[
            (
                "XSTACK_TORCH_EXTRA_INDEX_URL",
                "https://download.pytorch.org/whl/cpu",
            ),
            ("XSTACK_JAX_INDEX_URL", "https://example.org/simple"),
        ]);
        assert_eq!(
            index_args_from(&list(&["torch==2.5.1", "numpy"]), &set),
            list(&["--extra-index-url", "https://download.pytorch.org/whl/cpu"])
        );
        assert_eq!(
            index_args_from(&list(&["Jax[cpu]", "optax"]), &set),
            list(&["--index-url", "https://example.org/simple"])
        );
        assert!(index_args_from(&list(&["numpy", "scikit-learn"]), &set).is_empty());
        assert!(index_args_from(&list(&["torch"]), &vars(&[])).is_empty());
    }

    #[test]
    fn several_extra_indexes_each_get_their_flag() {
        let set = vars(&[
            ("XSTACK_TORCH_INDEX_URL", "https://a.example/simple"),
            (
                "XSTACK_TORCH_EXTRA_INDEX_URL",
                " https://b.example/simple  https://c.example/simple ",
            ),
        ]);
        assert_eq!(
            index_args_from(&list(&["torchvision"]), &set),
            list(&[
                "--index-url",
                "https://a.example/simple",
                "--extra-index-url",
                "https://b.example/simple",
                "--extra-index-url",
                "https://c.example/simple",
            ])
        );
    }
}
