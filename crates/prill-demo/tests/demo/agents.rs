//! The demo agents' answers.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Client, only_line, start};

fn ask(text: &str, sly_data: Value) -> Value {
    json!({"user_message": {"type": "HUMAN", "text": text}, "sly_data": sly_data})
}

#[tokio::test]
async fn math_guy_multiplies_into_a_float() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    // The exact first request of neuro-san's math_guy/basic_sly_data.hocon.
    let request = json!({"user_message": {"type": "HUMAN", "text": "multiply"}, "sly_data": {"x": 847, "y": 23}, "chat_filter": {"chat_filter_type": "MINIMAL"}});
    let reply = client.chat("math_guy", &request).await;
    assert!(
        reply.text().contains(r#""sly_data": {"equals": 19481.0}"#),
        "{}",
        reply.text()
    );
    let line = only_line(&reply);
    assert_eq!(
        line["response"]["text"],
        "Check sly_data['equals'] for the result"
    );
    assert_eq!(
        line["response"]["sly_data"]["equals"].as_f64(),
        Some(19481.0)
    );
    assert!(line["response"]["sly_data"]["equals"].is_f64());
    server.shutdown().await;
}

#[tokio::test]
async fn math_guy_finds_the_operation_anywhere_in_the_text() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let cases = [
        ("What is x TIMES y?", 24.0),
        ("please Add them", 10.0),
        ("x plus y", 10.0),
        ("Subtract y from x", 2.0),
        ("x minus y", 2.0),
        ("divide x by y", 1.5),
    ];
    for (text, expected) in cases {
        let line = only_line(
            &client
                .chat("math_guy", &ask(text, json!({"x": 6, "y": 4})))
                .await,
        );
        assert_eq!(
            line["response"]["sly_data"]["equals"].as_f64(),
            Some(expected),
            "{text}"
        );
    }
    let line = only_line(
        &client
            .chat("math_guy", &ask("divide", json!({"x": 1, "y": 0})))
            .await,
    );
    assert!(
        line["response"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("zero"))
    );
    assert!(line["response"].get("sly_data").is_none());
    let line = only_line(
        &client
            .chat("math_guy", &ask("multiply", json!({"x": 1})))
            .await,
    );
    assert!(
        line["response"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("x and y"))
    );
    assert!(line["response"].get("sly_data").is_none());
    let line = only_line(
        &client
            .chat("math_guy", &ask("hello", json!({"x": 1, "y": 2})))
            .await,
    );
    assert!(line["response"].get("sly_data").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn music_nerd_pro_remembers_the_band_and_the_running_cost() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let first = json!({"user_message": {"type": "HUMAN", "text": "Who did Yellow Submarine?"}, "chat_filter": {"chat_filter_type": "MINIMAL"}});
    let line = only_line(&client.chat("music_nerd_pro", &first).await);
    let response = &line["response"];
    assert!(
        response["structure"]["answer"]
            .as_str()
            .is_some_and(|a| a.contains("Beatles"))
    );
    assert_eq!(response["structure"]["running_cost"].as_f64(), Some(3.0));
    assert_eq!(response["text"], response["structure"]["answer"]);
    let chat_context = response["chat_context"].clone();
    let history = &chat_context["chat_histories"][0];
    assert_eq!(
        history["origin"],
        json!([{"tool": "MusicNerdPro", "instantiation_index": 1}])
    );
    let types: Vec<&str> = history["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["type"].as_str().expect("a type"))
        .collect();
    assert_eq!(types, ["SYSTEM", "HUMAN", "AI"]);

    let second = json!({
        "user_message": {"type": "HUMAN", "text": "Where were they from?"},
        "chat_context": chat_context,
        "chat_filter": {"chat_filter_type": "MINIMAL"}
    });
    let line = only_line(&client.chat("music_nerd_pro", &second).await);
    let response = &line["response"];
    assert!(
        response["structure"]["answer"]
            .as_str()
            .is_some_and(|a| a.contains("Liverpool")),
        "{response}"
    );
    assert_eq!(response["structure"]["running_cost"].as_f64(), Some(6.0));
    let messages = response["chat_context"]["chat_histories"][0]["messages"]
        .as_array()
        .expect("messages")
        .len();
    assert_eq!(messages, 5);

    // Without the chat_context a conversation starts over.
    let fresh = json!({"user_message": {"type": "HUMAN", "text": "Where were they from?"}});
    let line = only_line(&client.chat("music_nerd_pro", &fresh).await);
    assert_eq!(
        line["response"]["structure"]["running_cost"].as_f64(),
        Some(3.0)
    );
    assert!(
        !line["response"]["text"]
            .as_str()
            .expect("text")
            .contains("Liverpool")
    );

    let line = only_line(&client.chat("music_nerd_pro", &json!({"user_message": {"text": "Who sang Bohemian Rhapsody, and where are they from?"}})).await);
    assert!(
        line["response"]["text"]
            .as_str()
            .expect("text")
            .contains("London")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn echo_returns_text_and_sly_data() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let sly = json!({"a": 1, "nested": {"b": [true, null]}});
    let reply = client
        .chat("echo", &ask("héllo {world} 😀", sly.clone()))
        .await;
    // Non-ASCII is escaped on the wire, as Python's json.dumps does.
    assert!(
        reply
            .text()
            .contains(r#""text": "h\u00e9llo {world} \ud83d\ude00""#),
        "{}",
        reply.text()
    );
    let line = only_line(&reply);
    assert_eq!(line["response"]["text"], "héllo {world} 😀");
    assert_eq!(line["response"]["sly_data"], sly);
    assert_eq!(line["response"]["structure"], sly);
    let human = &line["response"]["chat_context"]["chat_histories"][0]["messages"][1];
    assert_eq!(human["text"], "héllo {{world}} 😀");

    let line = only_line(
        &client
            .chat("echo", &json!({"user_message": {"text": "plain"}}))
            .await,
    );
    assert!(line["response"].get("sly_data").is_none());
    assert!(line["response"].get("structure").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn slow_waits_its_delay() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let start = Instant::now();
    let line = only_line(
        &client
            .chat("slow", &ask("go", json!({"delay_ms": 300})))
            .await,
    );
    assert!(start.elapsed() >= Duration::from_millis(300));
    assert_eq!(line["response"]["text"], "I waited 300 ms.");
    assert_eq!(line["response"]["structure"], json!({"delay_ms": 300}));
    let line = only_line(
        &client
            .chat("slow", &ask("go", json!({"delay_ms": 0})))
            .await,
    );
    assert_eq!(line["response"]["text"], "I waited 0 ms.");
    server.shutdown().await;
}

#[tokio::test]
async fn flaky_is_seeded_and_follows_its_probabilities() {
    let server = start().await;
    let mut client = Client::plain(server.addr()).await;
    let modes = json!({"timeout": 0.2, "refusal": 0.1});
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let samples: u32 = 2000;
    for sample in 0..samples {
        let sly = json!({"seed": 7, "modes": modes, "sample": sample});
        let line = only_line(&client.chat("flaky", &ask("go", sly)).await);
        let text = line["response"]["text"].as_str().expect("text").to_owned();
        // The answer follows from the documented draw.
        let draw = prill_demo::uniform_draw(7, u64::from(sample));
        let expected = if draw < 0.1 {
            "failure refusal"
        } else if draw < 0.3 {
            "failure timeout"
        } else {
            "ok"
        };
        assert_eq!(text, expected, "sample {sample}");
        *counts.entry(text).or_default() += 1;
    }
    let share = |key: &str| counts.get(key).copied().unwrap_or(0) as f64 / f64::from(samples);
    assert!((share("failure timeout") - 0.2).abs() < 0.04, "{counts:?}");
    assert!((share("failure refusal") - 0.1).abs() < 0.03, "{counts:?}");
    assert!((share("ok") - 0.7).abs() < 0.05, "{counts:?}");

    // The same seed and sample give the same answer; the default sample is 0.
    let without_sample = json!({"seed": 7, "modes": modes});
    let with_zero = json!({"seed": 7, "modes": modes, "sample": 0});
    let a = only_line(&client.chat("flaky", &ask("go", without_sample)).await);
    let b = only_line(&client.chat("flaky", &ask("go", with_zero)).await);
    assert_eq!(a["response"]["text"], b["response"]["text"]);
    assert_eq!(a["response"]["structure"], b["response"]["structure"]);
    let line = only_line(&client.chat("flaky", &ask("go", json!({"seed": 1}))).await);
    assert_eq!(line["response"]["text"], "ok");
    server.shutdown().await;
}
