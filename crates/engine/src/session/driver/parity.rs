//! The parity probe after a failed grade (SPEC §3a): when a phase failed with `fidelity_gap`
//! or `crash` and the task has `[parity]`, the probe runs in a clean copy of the source (the
//! reference environment) and in the phase's verify copy (the target environment), each
//! confined as a local verify run is; each side's start is recorded as
//! [`Event::ProbeStarted`] and its output follows the verify run's in the Run log, and the
//! report is recorded as [`Event::Parity`]. It never changes the verdict.

use crate::process::RuntimeThreads;
use std::sync::atomic::AtomicBool;

use crate::grade::{FailureClass, Verdict};
use crate::parity::{ParityReport, ProbePlan, ProbeProgress, ProbeSide, run_probe};
use crate::workspace;

use super::{Driver, Stop};
use crate::event::Event;

impl Driver {
    /// Runs the probe when `verdict` is one it explains and the task has one.
    pub(super) async fn explain_with_parity(
        &mut self,
        phase: u8,
        verdict: &Verdict,
    ) -> Result<(), Stop> {
        let explains = matches!(
            verdict.failure,
            Some(FailureClass::FidelityGap | FailureClass::Crash)
        );
        let Some(parity) = self.task().spec.parity.clone().filter(|_| explains) else {
            return Ok(());
        };
        self.rec.emit(Event::Note {
            text: format!(
                "phase {phase}: parity probe: `{}` in the source, then in the port",
                parity.command
            ),
        });
        if !self.cfg.runner.is_local() {
            self.rec.emit(Event::Note {
                text: format!("phase {phase}: the parity probe runs on this machine"),
            });
        }
        let report = match self.probe(phase).await {
            Ok(report) => report,
            Err(Stop::Infra(message)) => ParityReport::failed(message),
            Err(stop) => return Err(stop),
        };
        self.rec.emit(Event::Parity { phase, report });
        self.write_result();
        Ok(())
    }

    /// The probe on a blocking thread: the reference environment, the source's copy, both
    /// sides; the probe's output reaches the Run log as it comes.
    async fn probe(&mut self, phase: u8) -> Result<ParityReport, Stop> {
        let out_dir = self.cfg.run_dir.join(format!("parity-{phase}"));
        let source_copy = out_dir.join("source");
        let source = self.cfg.source_dir.clone();
        let cache = self.cfg.cache_dir.clone();
        let reference_packages = self.task().spec.env.reference_packages.clone();
        let usage = crate::env::store::Usage::of(&self.task().spec.id, crate::env::Side::Reference);
        let source_layers = self.task().parity_source_layers(&source);
        let mut plan = ProbePlan::for_task(
            self.task(),
            ProbeSide {
                dir: source_copy.clone(),
                env: None,
                forbid: Vec::new(),
            },
            ProbeSide {
                dir: self.cfg.run_dir.join("verify"),
                env: self.env.clone(),
                forbid: self.task().spec.integrity.forbid_imports.clone(),
            },
            self.cfg.seed,
            Some(phase),
            out_dir,
            self.cfg.run_size,
        )
        .ok_or_else(|| Stop::Infra("the task has no [parity] section".to_string()))?;
        plan.source.env = self
            .blocking(move |progress, _cancel| {
                crate::env::ensure(&cache, &reference_packages, &usage, progress)
                    .map_err(|e| format!("the parity probe's reference environment: {e}"))
            })
            .await?;
        self.blocking_reporting(
            move |output, cancel: &AtomicBool| {
                let _ = std::fs::remove_dir_all(&plan.source.dir);
                workspace::copy_layers(&source_layers, &plan.source.dir)
                    .map_err(|e| format!("cannot copy the source for the parity probe: {e}"))?;
                let runtime = crate::process::runtime(RuntimeThreads::CallingThread)
                    .map_err(|e| format!("cannot start the parity probe's runtime: {e}"))?;
                let report = runtime.block_on(run_probe(&plan, cancel, &mut |progress| {
                    output(match progress {
                        ProbeProgress::Started(side) => Event::ProbeStarted { phase, side },
                        ProbeProgress::Output(text) => Event::RunOutput {
                            text: text.to_string(),
                        },
                    });
                }));
                let _ = std::fs::remove_dir_all(&plan.source.dir);
                Ok(report)
            },
            |event| event,
        )
        .await
    }
}
