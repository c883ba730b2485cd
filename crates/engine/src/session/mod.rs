//! A supervised session (its events are [`crate::event`]): the reducer (`state`), the recorder that sends
//! each event to the journal, the state and observers (`recorder`), the result file
//! (`result`), the headless progress lines (`progress`), and the driver that runs the phases (`driver`).

pub mod driver;
pub mod policy;
pub mod progress;
pub mod recorder;
pub mod result;
pub mod state;
