//! `expect_state` end to end: the retail domain of `fixtures/retail/` (a τ-bench-shaped
//! tool program over a JSON database), driven by the fake OpenAI server playing an
//! agent that makes scripted calls. τ-bench's rule for its database holds as stated:
//! a conversation passes when the database it leaves equals the one its reference
//! actions leave on a fresh program, whatever it read on the way and whatever it tried
//! that the tools refused; a wrong argument, a wrong order or one write too many fails.

use std::path::{Path, PathBuf};

use prill_testkit::providers::Reply;
use prill_testkit::providers::openai::FakeOpenAi;
use serde_json::{Value, json};

use crate::support::{expected, output_text, run_file, runtime, unit, verdicts, write};

/// The fixture's folder.
fn retail() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/retail")
}

/// The agent's turns for a request: each turn's calls, then the answer.
type Plan = (Vec<Vec<(&'static str, Value)>>, &'static str);

/// What the scripted agent does for a user's message, by what the message holds.
fn plan(query: &str) -> Option<Plan> {
    let cancel = |order: &str, reason: &str| {
        (
            "cancel_pending_order",
            json!({"order_id": order, "reason": reason}),
        )
    };
    let new_address = json!({"order_id": "#W4207395", "address1": "1457 Cedar Lane", "address2": "Apt 3B", "city": "Boulder", "state": "CO", "country": "USA", "zip": "80302"});
    let plans: [(&str, Plan); 11] = [
        (
            "[wrong reason]",
            (
                vec![vec![cancel("#W2611340", "ordered by mistake")]],
                "Cancelled.",
            ),
        ),
        (
            "[wrong order]",
            (
                vec![vec![cancel("#W4207395", "no longer needed")]],
                "Cancelled.",
            ),
        ),
        (
            "[one write too many]",
            (
                vec![
                    vec![cancel("#W2611340", "no longer needed")],
                    vec![("modify_pending_order_address", new_address.clone())],
                ],
                "Cancelled, and I updated an address too.",
            ),
        ),
        (
            "[refused, then right]",
            (
                vec![
                    vec![cancel("#W2611340", "too expensive")],
                    vec![cancel("#W2611340", "no longer needed")],
                ],
                "Cancelled: 104.92 back to your credit card.",
            ),
        ),
        (
            "[wrong refund]",
            (
                vec![vec![(
                    "return_delivered_order_items",
                    json!({"order_id": "#W7387996", "item_ids": ["1151293680", "5320792178"], "payment_method_id": "credit_card_7322"}),
                )]],
                "Return requested.",
            ),
        ),
        (
            "[cancels another]",
            (
                vec![vec![cancel("#W2611340", "ordered by mistake")]],
                "Done.",
            ),
        ),
        // The fixture's own tasks, done right (reads on the way, and a refused write).
        (
            "#W2611340",
            (
                vec![
                    vec![
                        (
                            "find_user_id_by_email",
                            json!({"email": "mia.garcia@example.com"}),
                        ),
                        ("get_order_details", json!({"order_id": "#W2611340"})),
                    ],
                    vec![cancel("#W2611340", "no longer needed")],
                ],
                "Your order is cancelled: 104.92 goes back to your credit card.",
            ),
        ),
        (
            "#W4207395",
            (
                vec![
                    vec![(
                        "find_user_id_by_name_zip",
                        json!({"first_name": "Noah", "last_name": "Brown", "zip": "80279"}),
                    )],
                    vec![("modify_pending_order_address", new_address)],
                ],
                "The order will ship to Boulder.",
            ),
        ),
        (
            "#W7387996",
            (
                vec![vec![(
                    "return_delivered_order_items",
                    json!({"order_id": "#W7387996", "item_ids": ["1151293680", "5320792178"], "payment_method_id": "gift_card_3491"}),
                )]],
                "The return is requested; the refund goes to your gift card.",
            ),
        ),
        (
            "#W5061109",
            (
                vec![
                    vec![
                        ("get_order_details", json!({"order_id": "#W5061109"})),
                        ("get_product_details", json!({"product_id": "6086499569"})),
                    ],
                    vec![(
                        "exchange_delivered_order_items",
                        json!({"order_id": "#W5061109", "item_ids": ["3234800602"], "new_item_ids": ["9612497925"], "payment_method_id": "gift_card_8013"}),
                    )],
                ],
                "Exchange requested: the difference of 4.22 is paid by your gift card.",
            ),
        ),
        (
            "#W9711842",
            (
                vec![vec![cancel("#W9711842", "ordered by mistake")]],
                "I'm sorry: a processed order cannot be cancelled.",
            ),
        ),
    ];
    plans
        .into_iter()
        .find(|(marker, _)| query.contains(marker))
        .map(|(_, plan)| plan)
}

/// The fake agent: the turn of its plan that the tool results so far reach.
fn agent(body: &Value) -> Option<Reply> {
    let messages = body["messages"].as_array()?;
    let query = messages.iter().find(|m| m["role"] == "user")?["content"].as_str()?;
    let (turns, answer) = plan(query)?;
    let answered = messages.iter().filter(|m| m["role"] == "tool").count();
    let mut made = 0;
    for turn in turns {
        if made == answered {
            let mut calls = turn.into_iter();
            let (name, args) = calls.next()?;
            let reply = calls.fold(Reply::tool_call(name, args), |r, (n, a)| {
                r.with_tool_call(n, a)
            });
            return Some(reply.usage(50, 10));
        }
        made += turn.len();
    }
    Some(Reply::text(answer).usage(50, 10))
}

fn fake() -> (
    tokio::runtime::Runtime,
    FakeOpenAi,
    Vec<(&'static str, String)>,
) {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.respond_with(agent);
    let env = vec![
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake".to_owned()),
    ];
    (rt, fake, env)
}

#[test]
fn the_retail_tasks_pass_when_the_database_ends_as_their_reference_actions_leave_it() {
    let (_rt, _fake, env) = fake();
    let dir = tempfile::tempdir().unwrap();
    let file = retail().join("retail.yaml");
    let (out, report) = run_file(dir.path(), file.to_str().unwrap(), &env);
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("cancel an order no longer needed", "passed"),
            ("change the address of a pending order", "passed"),
            ("return two items to a gift card", "passed"),
            ("exchange a T-shirt for another variant", "passed"),
            ("a processed order cannot be cancelled", "passed"),
        ]),
        "{all}"
    );
    let check = &unit(&report, "cancel an order no longer needed")["samples"][0]["interactions"][0]
        ["checks"][0];
    assert_eq!(check["name"], "expect_state", "{check}");
    assert_eq!(
        check["message"],
        "expect_state: the end state holds: the state 1 reference call leave"
    );
    assert_eq!(check["target"], "end_state");
}

/// The tests of the should-not-pass trajectories, on the fixture's tools.
const WRONG: &str = r##"
tests:
  - name: the wrong reason
    inputs: {query: "[wrong reason] Please cancel #W2611340, I no longer need it."}
    assertions:
      - expect_state:
          replay: [{tool: cancel_pending_order, args: {order_id: "#W2611340", reason: no longer needed}}]
  - name: the wrong order
    inputs: {query: "[wrong order] Please cancel #W2611340, I no longer need it."}
    assertions:
      - expect_state:
          replay: [{tool: cancel_pending_order, args: {order_id: "#W2611340", reason: no longer needed}}]
  - name: one write too many
    inputs: {query: "[one write too many] Please cancel #W2611340, I no longer need it."}
    assertions:
      - expect_state:
          replay: [{tool: cancel_pending_order, args: {order_id: "#W2611340", reason: no longer needed}}]
  - name: refused, then right
    inputs: {query: "[refused, then right] Please cancel #W2611340, I no longer need it."}
    assertions:
      - expect_state:
          replay: [{tool: cancel_pending_order, args: {order_id: "#W2611340", reason: no longer needed}}]
      - must_contain: "104.92"
  - name: the wrong refund
    inputs: {query: "[wrong refund] Return the keyboard and lamp of #W7387996 to my gift card."}
    assertions:
      - expect_state:
          replay:
            - tool: return_delivered_order_items
              args: {order_id: "#W7387996", item_ids: ["1151293680", "5320792178"], payment_method_id: gift_card_3491}
  - name: nothing to do, and another order cancelled
    inputs: {query: "[cancels another] Please cancel #W9711842."}
    assertions:
      - expect_state: {replay: []}
  - name: a reference call that cannot succeed
    inputs: {query: "[refused, then right] Please cancel #W2611340."}
    assertions:
      - expect_state:
          replay: [{tool: cancel_pending_order, args: {order_id: "#W9711842", reason: no longer needed}}]
  - name: the other checks of the state
    inputs: {query: "[refused, then right] Please cancel #W2611340."}
    assertions:
      - expect_state:
          paths:
            "$.orders['#W2611340'].status": cancelled
            "$.orders[?@.status == 'cancelled'].cancel_reason": [no longer needed, ordered by mistake]
            "$.users.mia_garcia_4516.payment_methods.gift_card_3491.balance": 80.0
          contains:
            orders: {"#W2611340": {payment_history: [{transaction_type: refund, amount: 104.92}]}}
          schema: {type: object, required: [users, orders, products]}
      - expect_state:
          equals: {}
          ignore: ["$.*"]
      - expect_state:
          paths: {"$.orders['#W2611340'].status": pending}
"##;

#[test]
fn a_wrong_argument_a_wrong_order_or_one_write_too_many_fails_and_says_where() {
    let (_rt, _fake, env) = fake();
    let dir = tempfile::tempdir().unwrap();
    for name in ["tools.py", "db.json"] {
        std::fs::copy(retail().join(name), dir.path().join(name)).unwrap();
    }
    let fixture = std::fs::read_to_string(retail().join("retail.yaml")).unwrap();
    let defaults = &fixture[..fixture.find("\ntests:").unwrap()];
    write(dir.path(), "wrong.yaml", &format!("{defaults}{WRONG}"));
    let (out, report) = run_file(dir.path(), "wrong.yaml", &env);
    let all = output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("the wrong reason", "failed"),
            ("the wrong order", "failed"),
            ("one write too many", "failed"),
            ("refused, then right", "passed"),
            ("the wrong refund", "failed"),
            ("nothing to do, and another order cancelled", "failed"),
            ("a reference call that cannot succeed", "errored"),
            ("the other checks of the state", "failed"),
        ]),
        "{all}"
    );
    let messages = |name: &str| -> Vec<String> {
        unit(&report, name)["samples"][0]["interactions"][0]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["message"].as_str().unwrap().to_owned())
            .collect()
    };
    let reason = &messages("the wrong reason")[0];
    assert!(
        reason.contains(
            r##"/orders/#W2611340/cancel_reason: expected "no longer needed", found "ordered by mistake""##
        ),
        "{reason}"
    );
    let order = &messages("the wrong order")[0];
    assert!(
        order.contains(r##"/orders/#W2611340/status: expected "cancelled", found "pending""##)
            && order
                .contains(r##"/orders/#W4207395/status: expected "pending", found "cancelled""##),
        "{order}"
    );
    let extra = &messages("one write too many")[0];
    assert!(
        extra.starts_with(
            r##"expect_state: 4 differences in the end state: /orders/#W4207395/address/address1: expected "88 Willow Court", found "1457 Cedar Lane""##
        ),
        "{extra}"
    );
    let refund = &messages("the wrong refund")[0];
    assert!(
        refund.contains(r##"/orders/#W7387996/return_payment_method_id: expected "gift_card_3491", found "credit_card_7322""##),
        "{refund}"
    );
    let broken = &messages("a reference call that cannot succeed")[0];
    assert!(
        broken.contains("reference call 1 (`cancel_pending_order` with")
            && broken.contains("was answered with an error: order #W9711842 is processed"),
        "{broken}"
    );
    let others = messages("the other checks of the state");
    assert_eq!(
        others[0],
        "expect_state: the end state holds: contains, `$.orders['#W2611340'].status`, `$.orders[?@.status == 'cancelled'].cancel_reason`, `$.users.mia_garcia_4516.payment_methods.gift_card_3491.balance`, schema"
    );
    assert_eq!(others[1], "expect_state: the end state holds: equals");
    assert_eq!(
        others[2],
        r##"expect_state: 1 difference in the end state: `$.orders['#W2611340'].status`: expected "pending", found "cancelled""##
    );
}

/// Mocks that answer in sequences, by arguments with `*`, after a delay, and check the
/// calls they received.
const MOCKS: &str = r##"
name: mocks
defaults:
  model: gpt-4o-mini
  provider: openai
  framework: openai-sdk
  tools: [find_user_id_by_email, get_order_details, cancel_pending_order]
  framework_config:
    tool_results:
      find_user_id_by_email:
        sequence: [{error: "directory timed out"}, mia_garcia_4516]
        expect_calls: 2
      get_order_details:
        by_args:
          - {args: {order_id: "*"}, result: {status: pending}}
        expect_calls: {max: 1}
      cancel_pending_order:
        value: {status: cancelled}
        expect_calls: [{order_id: "#W2611340", reason: "no longer needed"}]
tests:
  - name: the calls the mocks expect
    inputs: {query: "[mocked, right] cancel #W2611340"}
    assertions: [{must_contain: cancelled}]
  - name: a call the mock did not expect
    inputs: {query: "[mocked, wrong] cancel #W2611340"}
    assertions: [{must_contain: cancelled}]
  - name: a mock slower than the test allows
    inputs: {query: "[mocked, slow] cancel #W2611340"}
    timeout_ms: 300
    framework_config:
      tool_results:
        find_user_id_by_email: {value: mia_garcia_4516, delay_in_seconds: 30}
    assertions: [{must_contain: cancelled}]
"##;

/// The scripted agent of the mock tests.
fn mocked(body: &Value) -> Option<Reply> {
    let messages = body["messages"].as_array()?;
    let query = messages.iter().find(|m| m["role"] == "user")?["content"].as_str()?;
    let reason = if query.contains("wrong") {
        "ordered by mistake"
    } else {
        "no longer needed"
    };
    let turns = [
        Reply::tool_call(
            "find_user_id_by_email",
            json!({"email": "mia.garcia@example.com"}),
        ),
        Reply::tool_call(
            "find_user_id_by_email",
            json!({"email": "mia.garcia@example.com"}),
        ),
        Reply::tool_call("get_order_details", json!({"order_id": "#W2611340"})),
        Reply::tool_call(
            "cancel_pending_order",
            json!({"order_id": "#W2611340", "reason": reason}),
        ),
    ];
    let answered = messages.iter().filter(|m| m["role"] == "tool").count();
    Some(
        turns
            .into_iter()
            .nth(answered)
            .unwrap_or_else(|| Reply::text("Your order is cancelled.")),
    )
}

#[test]
fn mocks_answer_in_sequence_and_check_the_calls_they_received() {
    let rt = runtime();
    let fake = rt.block_on(FakeOpenAi::start());
    fake.respond_with(mocked);
    let env = [
        ("OPENAI_BASE_URL", fake.base_url()),
        ("OPENAI_API_KEY", "sk-fake".to_owned()),
    ];
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "mocks.yaml", MOCKS);
    let (out, report) = run_file(dir.path(), "mocks.yaml", &env);
    let all = output_text(&out);
    assert_eq!(
        verdicts(&report),
        expected(&[
            ("the calls the mocks expect", "passed"),
            ("a call the mock did not expect", "failed"),
            ("a mock slower than the test allows", "errored"),
        ]),
        "{all}"
    );
    let right = &unit(&report, "the calls the mocks expect")["samples"][0]["interactions"][0];
    let paths: Vec<&str> = right["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "assertions[0].must_contain",
            "framework_config.tool_results.cancel_pending_order.expect_calls",
            "framework_config.tool_results.find_user_id_by_email.expect_calls",
            "framework_config.tool_results.get_order_details.expect_calls",
        ]
    );
    assert_eq!(right["trajectory"][0]["is_error"], true, "{right}");
    assert_eq!(right["trajectory"][0]["result"], "directory timed out");
    let wrong = &unit(&report, "a call the mock did not expect")["samples"][0]["interactions"][0]["checks"]
        [1];
    assert_eq!(
        wrong["message"],
        r##"expect_calls: `cancel_pending_order`'s call 1 had arguments {"order_id":"#W2611340","reason":"ordered by mistake"}, expected {"order_id":"#W2611340","reason":"no longer needed"}"##
    );
    assert!(
        all.contains("at mocks.yaml:19:9, interaction 0"),
        "the failure says where the expectation is written: {all}"
    );
    let slow = &unit(&report, "a mock slower than the test allows")["samples"][0];
    let error = slow["interactions"][0]["error"].to_string() + &slow["error"].to_string();
    assert!(error.contains("timeout"), "{error}");
}
