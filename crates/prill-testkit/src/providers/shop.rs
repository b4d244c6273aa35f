//! A scripted shop: one fake OpenAI server playing the three parts of a conversation
//! with a simulated customer over the retail domain of `fixtures/retail/` (the
//! agent's tool loop, the simulated customer, and the judge), told apart by what each
//! request carries. The CLI's tests of simulated users and `cargo xtask bench
//! --conversations` both drive it.
//!
//! - The **customer** (a request that offers `end_conversation`) asks to cancel order
//!   `#W2611340`, then ends the conversation as done; one whose conversation holds
//!   `[phone]` states a phone number outside its brief, one with `[chatty]` never ends.
//! - The **agent** cancels the order when asked (a `cancel_pending_order` call), then
//!   says so.
//! - The **judge** (a request with `response_format`) fails a turn that states the phone
//!   number, and passes everything else.
//!
//! ```
//! use prill_testkit::providers::shop;
//! use serde_json::json;
//!
//! let judge = json!({"response_format": {}, "messages": []});
//! assert!(shop::play(&judge).is_some());
//! ```

use serde_json::{Value, json};

use super::Reply;

/// A judge's structured verdict.
fn verdict(pass: bool, reason: &str) -> Reply {
    Reply::structured(json!({"verdict": if pass { "pass" } else { "fail" }, "reason": reason}))
}

/// The user's messages of a request, in order.
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

/// The reply of the part `body` is for (always one), told apart by what each request carries.
pub fn play(body: &Value) -> Option<Reply> {
    let text = body.to_string();
    if body.get("response_format").is_some() {
        // The judge: of a simulated turn (fails one that states a phone number), or of
        // the trajectory.
        let latest = text
            .rsplit("The user's latest message:")
            .next()
            .unwrap_or_default();
        return Some(if latest.contains("555-0100") {
            verdict(false, "the user states a phone number it was not given")
        } else {
            verdict(true, "as asked")
        });
    }
    if text.contains("\"end_conversation\"") {
        return Some(customer(body));
    }
    Some(agent(body))
}

/// The simulated customer: by its own turns so far, and the kind of customer.
fn customer(body: &Value) -> Reply {
    let text = body.to_string();
    let own = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
        .count();
    let first = text.contains("(The agent is waiting for your message.)");
    if text.contains("[phone]") {
        return Reply::text("Sure, my phone number is 555-0100.");
    }
    if text.contains("[chatty]") {
        return Reply::text("Also, one more question.");
    }
    match (first, own) {
        (true, 0) => Reply::text("Hi, please cancel my order #W2611340, I no longer need it."),
        _ => Reply::tool_call("end_conversation", json!({"reason": "done"})),
    }
}

/// The agent: cancels when asked, then says so.
fn agent(body: &Value) -> Reply {
    let asked = user_texts(body).join(" ");
    let tools = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .count();
    let last_is_user = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .is_some_and(|m| m["role"] == "user");
    if asked.contains("no longer need") && tools == 0 {
        return Reply::tool_call(
            "cancel_pending_order",
            json!({"order_id": "#W2611340", "reason": "no longer needed"}),
        );
    }
    if last_is_user {
        return Reply::text("I can cancel that: which order, and why?");
    }
    Reply::text("Your order #W2611340 is cancelled; 104.92 goes back to your card.")
}

/// The `tests:` of a Sentinel suite of `n` conversations on the retail domain (to follow
/// the defaults of `fixtures/retail/retail.yaml`), each with a simulated customer of its
/// own and its end state checked: a third get their order cancelled (and pass), a third
/// invent a phone number, a third never say goodbye (both simulator faults).
pub fn customers(n: usize) -> String {
    let mut out = String::from("\ntests:\n");
    for i in 0..n {
        let (kind, marker) = match i % 3 {
            0 => ("cancelled", ""),
            1 => ("phone", "[phone] "),
            _ => ("chatty", "[chatty] "),
        };
        let query = if marker.is_empty() {
            String::new()
        } else {
            format!(
                "    inputs: {{query: \"{marker}I want to cancel #W2611340 (customer {i})\"}}\n"
            )
        };
        let inputs = if query.is_empty() {
            format!(
                "    inputs: {{system_prompt: \"You are the shop's support agent (desk {i}).\"}}\n"
            )
        } else {
            query
        };
        out.push_str(&format!(
            "  - name: customer {i} ({kind})\n{inputs}    user:\n      goal: Get order #W2611340 cancelled because you no longer need it.\n      facts: {{order: \"#W2611340\", reason: no longer needed}}\n      model: gpt-4o-mini\n      max_turns: 3\n    assertions:\n      - expect_state:\n          replay: [{{tool: cancel_pending_order, args: {{order_id: \"#W2611340\", reason: no longer needed}}}}]\n"
        ));
    }
    out
}
