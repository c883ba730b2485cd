//! Metric extraction on its own thread, so the regexes of a fast-scrolling log run beside
//! the terminal emulator and the journal instead of after them.
//!
//! Output text goes in through a bounded channel (back-pressure: the driver waits when the
//! thread is 16 pieces behind); points come back through an unbounded one the driver
//! selects on, so the thread never waits for the driver and the two cannot block each other.
//! Points come back in the order of the text, and the last message says the stream ended.

use std::sync::mpsc::{SyncSender, sync_channel};

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use super::{Extractor, MetricStream, Point};

/// Pieces of text the thread may be behind before `feed` waits.
const QUEUE: usize = 16;

/// What the extraction thread sends back.
#[derive(Debug, Clone, PartialEq)]
pub enum Extracted {
    /// Points found in lines completed so far, as (metric index, point).
    Points(Vec<(usize, Point)>),
    /// The stream ended: the points of its unfinished last line; nothing follows.
    Done(Vec<(usize, Point)>),
}

/// A metric stream running on its own thread.
#[derive(Debug)]
pub struct MetricWorker {
    input: Option<SyncSender<String>>,
    output: UnboundedReceiver<Extracted>,
    done: bool,
}

impl MetricWorker {
    /// Starts the thread with the task's extractors.
    pub fn start(extractor: Extractor) -> std::io::Result<MetricWorker> {
        let (input, texts) = sync_channel::<String>(QUEUE);
        let (sender, output) = unbounded_channel();
        std::thread::Builder::new()
            .name("metrics".to_string())
            .spawn(move || {
                let mut stream = MetricStream::new(extractor);
                for text in texts {
                    let points = stream.feed(&text);
                    if !points.is_empty() && sender.send(Extracted::Points(points)).is_err() {
                        return;
                    }
                }
                let _ = sender.send(Extracted::Done(stream.finish()));
            })?;
        Ok(MetricWorker {
            input: Some(input),
            output,
            done: false,
        })
    }

    /// Hands output text to the thread (waiting while it is [`QUEUE`] pieces behind).
    pub fn feed(&mut self, text: &str) {
        if let Some(input) = &self.input {
            let _ = input.send(text.to_string());
        }
    }

    /// Says the output ended; the thread answers with [`Extracted::Done`] after the points
    /// of everything fed before.
    pub fn finish(&mut self) {
        self.input = None;
    }

    /// Where the points arrive; None once [`Extracted::Done`] was received.
    pub fn output(&mut self) -> Option<&mut UnboundedReceiver<Extracted>> {
        (!self.done).then_some(&mut self.output)
    }

    /// Notes that [`Extracted::Done`] (or the channel's end) was received.
    pub fn mark_done(&mut self) {
        self.done = true;
    }

    /// Whether every point of the finished stream was received.
    pub fn is_done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::MetricSpec;

    fn extractor() -> Extractor {
        let spec = MetricSpec {
            name: "acc".to_string(),
            regex: Some(r"step (?P<step>\d+) acc=(?P<value>[0-9.]+)".to_string()),
            json_key: None,
            step_key: None,
        };
        Extractor::from_specs(&[spec]).unwrap()
    }

    #[tokio::test]
    async fn points_come_back_in_order_and_the_unfinished_line_at_the_end() {
        let mut worker = MetricWorker::start(extractor()).unwrap();
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!("step {i} acc=0.{i}\n"));
            if i % 100 == 99 {
                worker.feed(&text);
                text.clear();
            }
        }
        worker.feed("step 5000 acc=0.5");
        worker.finish();
        let mut steps = Vec::new();
        while let Some(rx) = worker.output() {
            match rx.recv().await {
                Some(Extracted::Points(points)) => steps.extend(points.iter().map(|p| p.1.step)),
                Some(Extracted::Done(points)) => {
                    steps.extend(points.iter().map(|p| p.1.step));
                    worker.mark_done();
                }
                None => worker.mark_done(),
            }
        }
        let expected: Vec<Option<f64>> = (0..=5000).map(|i| Some(f64::from(i))).collect();
        assert_eq!(steps, expected);
        assert!(worker.is_done());
    }
}
