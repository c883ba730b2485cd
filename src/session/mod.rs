//! A supervised session: the events (`event`), the reducer (`state`), the recorder that sends
//! each event to the journal, the state and observers (`recorder`), the result file
//! (`result`), and the driver that runs the phases (`driver`).

pub mod driver;
pub mod event;
pub mod recorder;
pub mod result;
pub mod state;
