//! The last-run report keeps each unit small until the run ends, and writes what
//! `LastRun::to_json` writes of the same units, byte for byte.

use prill_report::{LastRunReport, Output};
use prill_run::Event;
use prill_run::last_run::{LastRun, LastUnit};

use crate::fixtures::{Capture, feed, run};

#[test]
fn the_last_run_written_is_the_last_run_of_its_units() {
    for cancelled in [false, true] {
        let events = run(cancelled);
        let capture = Capture::default();
        feed(
            &mut LastRunReport::new(Output::writer(capture.clone())),
            &events,
        );
        let units = events
            .iter()
            .filter_map(|e| match e {
                Event::UnitFinished(unit) => Some(LastUnit::of(unit)),
                _ => None,
            })
            .collect::<Vec<_>>();
        assert_eq!(units.len(), 4);
        assert_eq!(capture.text(), LastRun::new(units).to_json());
    }
}
