//! What model calls cost: `[prices]` of `prill.toml` (US dollars per million input and
//! output tokens, by `provider:model`) applied to the usage a call reports. The engine
//! knows no prices; the session fills each interaction's cost into the events before
//! any reporter or the history sees them.

use std::collections::BTreeMap;

use prill_run::events::{Event, SampleReport, UnitId, UnitReport};
use prill_spec::model::config::PriceConfig;

use crate::settings::Settings;

/// The prices of `prill.toml`, by `provider:model`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices(BTreeMap<String, PriceConfig>);

impl Settings {
    /// `[prices]` of `prill.toml`; none without one.
    pub fn prices(&self) -> Prices {
        Prices(
            self.config
                .as_ref()
                .map(|c| c.prices.clone())
                .unwrap_or_default(),
        )
    }
}

impl Prices {
    /// Whether no model has a price.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The price of the model `unit` calls: its provider (the connection of a model
    /// case) and its model (the target).
    pub fn of(&self, unit: &UnitId) -> Option<PriceConfig> {
        self.0
            .get(&format!("{}:{}", unit.connection, unit.target))
            .copied()
    }

    /// Fills in the cost of every interaction `event` reports whose model has a price
    /// and whose usage gives both input and output tokens; any other cost stays unknown.
    /// An answer from the model response cache spent no tokens: it costs 0.
    pub fn fill(&self, event: &mut Event) {
        match event {
            Event::SampleFinished { unit, sample } => self.fill_sample(unit, sample),
            Event::UnitFinished(unit) => self.fill_unit(unit),
            Event::RunStarted { .. }
            | Event::UnitStarted { .. }
            | Event::WorkersReady(_)
            | Event::RunFinished(_) => {}
        }
    }

    /// [`Prices::fill`] for one unit's samples.
    pub fn fill_unit(&self, unit: &mut UnitReport) {
        for sample in &mut unit.samples {
            self.fill_sample(&unit.unit, sample);
        }
    }

    fn fill_sample(&self, unit: &UnitId, sample: &mut SampleReport) {
        let Some(price) = self.of(unit) else {
            return;
        };
        for interaction in &mut sample.interactions {
            let call = &mut interaction.call;
            call.cost = if call.cached {
                // An answer from the model response cache spent no tokens.
                Some(0.0)
            } else {
                call.usage
                    .and_then(|u| Some(price.cost(u.input?, u.output?)))
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use prill_check::TokenUsage;
    use prill_run::events::{CallInfo, InteractionReport};
    use prill_spec::Dialect;

    use super::*;

    fn sample(usage: Option<TokenUsage>) -> SampleReport {
        SampleReport {
            index: 0,
            status: prill_check::Status::Passed,
            duration: Duration::ZERO,
            interactions: vec![InteractionReport {
                call: CallInfo {
                    usage,
                    ..CallInfo::default()
                },
                ..InteractionReport::sent(0, None)
            }],
            error: None,
            taped: Default::default(),
        }
    }

    fn unit(connection: &str, target: &str) -> UnitId {
        UnitId {
            case_id: "c".into(),
            name: "n".into(),
            file: PathBuf::from("t.yaml"),
            dialect: Dialect::SentinelSpec,
            connection: connection.into(),
            target: target.into(),
            tags: Vec::new(),
        }
    }

    fn cost(prices: &Prices, unit: UnitId, usage: Option<TokenUsage>) -> Option<f64> {
        let mut event = Event::SampleFinished {
            unit,
            sample: sample(usage),
        };
        prices.fill(&mut event);
        match event {
            Event::SampleFinished { sample, .. } => sample.interactions[0].call.cost,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_call_costs_its_tokens_at_its_model_s_price_and_nothing_is_guessed() {
        let prices = Prices(BTreeMap::from([(
            "openai:gpt-4o-mini".to_owned(),
            PriceConfig {
                input: 0.15,
                output: 0.6,
            },
        )]));
        let usage = |input, output| {
            Some(TokenUsage {
                input,
                output,
                reasoning: None,
            })
        };
        let priced = cost(
            &prices,
            unit("openai", "gpt-4o-mini"),
            usage(Some(1000), Some(500)),
        )
        .unwrap();
        assert!((priced - 0.00045).abs() < 1e-12, "{priced}");
        // Another model, a missing count, no usage: unknown.
        assert_eq!(
            cost(&prices, unit("openai", "gpt-4o"), usage(Some(1), Some(1))),
            None
        );
        assert_eq!(
            cost(&prices, unit("openai", "gpt-4o-mini"), usage(Some(1), None)),
            None
        );
        assert_eq!(cost(&prices, unit("openai", "gpt-4o-mini"), None), None);
    }
}
