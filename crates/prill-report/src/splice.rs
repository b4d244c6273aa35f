//! [`Splicer`]: writes a JSON Lines stream's `unit_finished` line with the samples its
//! `sample_finished` lines already hold, instead of serializing every sample twice.
//!
//! A unit's samples reach a stream twice: each in its own `sample_finished` line as it
//! ends, then all of them again in the unit's `unit_finished` line. The bytes are the
//! same both times, so the first serialization is kept (for a unit in flight, up to
//! [`MAX_KEPT`] samples) and put into the second line as it is. The lines are byte for
//! byte what serializing the [`Line`] writes: a test compares both ways on every kind
//! of unit. When what was kept does not match the unit's samples (a unit with more
//! samples than are kept, or a stream that saw only part of the run), the line is
//! serialized whole, as before; so is the line of a unit whose long answers it quotes
//! (`UnitReport::quote_answers`).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::value::{RawValue, to_raw_value};

use prill_run::events::ANSWER_QUOTED;

use crate::format::{
    Line, PassRates, Quarantine, Record, ReliabilityPlan, Sample, Status, Tally, Unit, UnitId,
};

/// The most samples kept for one unit in flight: past it, the unit's line is
/// serialized whole, so memory stays bounded whatever a unit's success ratio.
pub(crate) const MAX_KEPT: usize = 16;

/// The samples written so far for each unit in flight, keyed by the unit's JSON.
#[derive(Default)]
pub(crate) struct Splicer {
    kept: HashMap<Box<str>, Vec<(u32, Box<RawValue>)>>,
}

/// A `sample_finished` line: its unit and sample already serialized
/// ([`RawValue`]), or not.
#[derive(Serialize)]
struct SampleLine<'a, U: ?Sized, S: ?Sized> {
    schema_version: u32,
    event: &'static str,
    unit: &'a U,
    sample: &'a S,
}

/// A `unit_finished` line: the fields of [`Unit`], in its order, its samples already
/// serialized.
#[derive(Serialize)]
struct UnitLine<'a> {
    schema_version: u32,
    event: &'static str,
    unit: &'a RawValue,
    verdict: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    success_ratio: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reliability: Option<ReliabilityPlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    quarantine: Option<&'a Quarantine>,
    tally: Tally,
    #[serde(skip_serializing_if = "Option::is_none")]
    rates: Option<&'a PassRates>,
    samples: Vec<&'a RawValue>,
    duration: f64,
}

impl Splicer {
    /// Writes `line`, without its newline, to the end of `out`.
    pub(crate) fn write(&mut self, line: &Line, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match &line.record {
            Record::SampleFinished { unit, sample } => {
                self.sample_line(line.schema_version, unit, sample, out)
            }
            Record::UnitFinished(unit) => self.unit_line(line, unit, out),
            _ => serde_json::to_writer(out, line),
        }
    }

    fn sample_line(
        &mut self,
        schema_version: u32,
        unit: &UnitId,
        sample: &Sample,
        out: &mut Vec<u8>,
    ) -> serde_json::Result<()> {
        // A long answer is quoted in the unit's line, so that line differs: such a
        // sample is not kept, and is written straight out, not copied first.
        let long = sample
            .interactions
            .iter()
            .any(|i| i.answer.as_ref().is_some_and(|a| a.len() > ANSWER_QUOTED));
        if long {
            return serde_json::to_writer(
                out,
                &SampleLine {
                    schema_version,
                    event: "sample_finished",
                    unit,
                    sample,
                },
            );
        }
        let unit = to_raw_value(unit)?;
        let sample_json = to_raw_value(sample)?;
        serde_json::to_writer(
            out,
            &SampleLine {
                schema_version,
                event: "sample_finished",
                unit: &*unit,
                sample: &*sample_json,
            },
        )?;
        let kept = self.kept.entry(unit.get().into()).or_default();
        if kept.len() < MAX_KEPT {
            kept.push((sample.index, sample_json));
        }
        Ok(())
    }

    fn unit_line(&mut self, line: &Line, unit: &Unit, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let id = to_raw_value(&unit.unit)?;
        let kept = self.kept.remove(id.get()).unwrap_or_default();
        let quoted = unit
            .samples
            .iter()
            .flat_map(|s| &s.interactions)
            .any(|i| i.answer_bytes.is_some());
        let matches = !quoted
            && kept.len() == unit.samples.len()
            && kept
                .iter()
                .zip(&unit.samples)
                .all(|((index, _), sample)| *index == sample.index);
        if !matches {
            return serde_json::to_writer(out, line);
        }
        serde_json::to_writer(
            out,
            &UnitLine {
                schema_version: line.schema_version,
                event: "unit_finished",
                unit: &id,
                verdict: unit.verdict,
                success_ratio: unit.success_ratio.as_deref(),
                reliability: unit.reliability,
                quarantine: unit.quarantine.as_ref(),
                tally: unit.tally,
                rates: unit.rates.as_ref(),
                samples: kept.iter().map(|(_, json)| &**json).collect(),
                duration: unit.duration,
            },
        )
    }
}
