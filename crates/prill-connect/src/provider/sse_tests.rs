//! Tests of the server-sent event decoder: the examples of the HTML Living Standard's
//! "Interpreting an event stream" (9.2.6), then each of its rules, every stream fed
//! whole, split in two at every byte, and byte by byte.

use std::time::Duration;

use super::*;

/// An event of type `message` with `data` and the last event ID `id`.
fn message(data: &str, id: &str) -> SseEvent {
    SseEvent {
        event: None,
        data: data.into(),
        id: id.into(),
    }
}

/// The events `chunks` dispatch, the rest `finish` hands back, and the decoder's last
/// event ID and reconnection time before it.
fn run(chunks: &[&[u8]]) -> (Vec<SseEvent>, Option<SseEvent>, String, Option<Duration>) {
    let mut decoder = SseDecoder::new(1 << 20);
    let mut all = Vec::new();
    for chunk in chunks {
        all.extend(decoder.feed(chunk).unwrap());
    }
    let id = decoder.last_event_id().to_owned();
    let retry = decoder.reconnection_time();
    (all, decoder.finish(), id, retry)
}

/// What `bytes` decode to, checked to be the same wherever chunks split them.
fn decoded(bytes: &[u8]) -> (Vec<SseEvent>, Option<SseEvent>, String, Option<Duration>) {
    let whole = run(&[bytes]);
    for at in 0..=bytes.len() {
        let (a, b) = bytes.split_at(at);
        assert_eq!(run(&[a, b]), whole, "split at {at}");
    }
    let one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(run(&one_by_one), whole, "byte by byte");
    assert_eq!(run(&[b"", bytes, b""]), whole, "with empty chunks");
    whole
}

/// The events `text` dispatches, when it ends between events.
fn events(text: &str) -> Vec<SseEvent> {
    let (events, rest, ..) = decoded(text.as_bytes());
    assert_eq!(rest, None, "the stream ended mid-event");
    events
}

/// The data of each event `text` dispatches.
fn data(text: &str) -> Vec<String> {
    events(text).into_iter().map(|e| e.data).collect()
}

// The spec's own examples.

#[test]
fn spec_stock_example_joins_data_lines_with_newlines() {
    let got = events("data: YHOO\ndata: +2\ndata: 10\n\n");
    assert_eq!(got, vec![message("YHOO\n+2\n10", "")]);
    assert_eq!(got[0].kind(), "message");
}

#[test]
fn spec_four_blocks_example_comment_id_and_id_reset() {
    // A comment block fires nothing; `id: 1` is the first event's last event ID; `id`
    // with no value resets it to empty; two spaces after the colon leave one.
    let text = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n";
    assert_eq!(
        events(text),
        vec![
            message("first event", "1"),
            message("second event", ""),
            message(" third event", ""),
        ]
    );
}

#[test]
fn spec_example_with_empty_data_fires_two_events_and_discards_the_last_block() {
    // `data` fires an event with empty data, `data` twice one with a single newline, and
    // the last block, not followed by a blank line, is discarded.
    let (got, rest, ..) = decoded(b"data\n\ndata\ndata\n\ndata:");
    assert_eq!(got, vec![message("", ""), message("\n", "")]);
    assert_eq!(rest, Some(message("", "")), "the stream ended mid-event");
}

#[test]
fn spec_example_space_after_the_colon_is_ignored() {
    assert_eq!(
        events("data:test\n\ndata: test\n\n"),
        vec![message("test", ""), message("test", "")]
    );
}

// Lines.

#[test]
fn cr_crlf_and_lf_each_end_a_line() {
    assert_eq!(data("data: a\rdata: b\r\r"), ["a\nb"]);
    assert_eq!(data("data: a\r\ndata: b\r\n\r\n"), ["a\nb"]);
    assert_eq!(data("data: a\ndata: b\n\n"), ["a\nb"]);
    assert_eq!(
        data("data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n"),
        ["a", "b", "c", "d"]
    );
    // `\n\r` is two line ends, not one.
    assert_eq!(data("data: a\n\rdata: b\n\n"), ["a", "b"]);
}

#[test]
fn a_crlf_split_across_two_chunks_is_one_line_end() {
    // Read as two line ends, the `\n` would end a blank line and dispatch `a` alone.
    let (got, rest, ..) = run(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(got, vec![message("a\nb", "")]);
    assert_eq!(rest, None);
    // A `\r` ending a chunk, then a chunk that opens with anything but `\n`.
    let (got, ..) = run(&[b"data: a\r", b"data: b\r", b"\r"]);
    assert_eq!(got, vec![message("a\nb", "")]);
}

#[test]
fn a_line_with_no_colon_is_a_field_with_an_empty_value() {
    assert_eq!(data("data\ndata\n\n"), ["\n"]);
    assert_eq!(
        events("event\ndata: x\n\n"),
        vec![message("x", "")],
        "an empty event type is `message`"
    );
}

#[test]
fn only_the_first_colon_splits_and_only_one_space_goes() {
    assert_eq!(data("data: a: b:c\n\n"), ["a: b:c"]);
    assert_eq!(data("data:   x  \n\n"), ["  x  "]);
    assert_eq!(data("data:\tx\n\n"), ["\tx"], "only a space is removed");
}

#[test]
fn comments_are_ignored() {
    assert_eq!(data(":\n: keep-alive\ndata: a\n:data: b\n\n"), ["a"]);
    assert!(events(": only a comment\n\n").is_empty());
}

// Encoding.

#[test]
fn a_bom_opening_the_stream_is_dropped_once() {
    assert_eq!(data("\u{FEFF}data: x\n\n"), ["x"]);
    // The second one is part of the first field's name: an unknown field.
    assert_eq!(data("\u{FEFF}\u{FEFF}data: x\n\ndata: y\n\n"), ["y"]);
    // A stream that is only a BOM ended between events.
    assert!(events("\u{FEFF}").is_empty());
}

#[test]
fn a_bom_later_in_the_stream_is_kept() {
    assert_eq!(data("data: a\n\n\u{FEFF}data: b\n\n"), ["a"]);
    assert_eq!(data("data: \u{FEFF}b\n\n"), ["\u{FEFF}b"]);
    assert_eq!(data("\ndata: \u{FEFF}c\n\n"), ["\u{FEFF}c"]);
    // Not at the stream's start: after a blank first line, the BOM is a field's name.
    assert!(events("\n\u{FEFF}data: d\n\n").is_empty());
}

#[test]
fn a_character_split_across_chunks_is_decoded_whole() {
    // `decoded` splits the two- to four-byte characters at every byte.
    assert_eq!(data("data: é € 😀\n\n"), ["é € 😀"]);
    let (got, ..) = run(&[b"data: \xF0\x9F", b"\x98\x80\n\n"]);
    assert_eq!(got, vec![message("😀", "")]);
}

#[test]
fn bytes_that_are_not_utf8_read_as_replacement_characters() {
    let (got, ..) = decoded(b"data: a\xFFb\xE2\x82\n\n");
    assert_eq!(got, vec![message("a\u{FFFD}b\u{FFFD}", "")]);
}

// Fields.

#[test]
fn the_event_type_names_one_event_and_defaults_to_message() {
    let got = events(
        "event: add\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\nevent: a\nevent: b\ndata: 4\n\n",
    );
    let kinds: Vec<&str> = got.iter().map(SseEvent::kind).collect();
    assert_eq!(kinds, ["add", "message", "message", "b"]);
    assert_eq!(got[0].event.as_deref(), Some("add"));
    assert_eq!(got[2].event, None, "an empty event type is `message`");
}

#[test]
fn the_last_event_id_persists_across_events() {
    let got = events("id: 7\ndata: a\n\ndata: b\n\nid: 8\n\ndata: c\n\nid\ndata: d\n\n");
    let ids: Vec<&str> = got.iter().map(|e| e.id.as_str()).collect();
    // `id: 8` in a block without data dispatches nothing, and still sets the ID.
    assert_eq!(ids, ["7", "7", "8", ""]);
    assert_eq!(data("id: 1\ndata: a\n\n"), ["a"]);
}

#[test]
fn an_id_holding_nul_is_ignored() {
    let (got, _, id, _) = decoded(b"id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n");
    assert_eq!(got, vec![message("a", "1"), message("b", "1")]);
    assert_eq!(id, "1");
    // `id:` with no value is no NUL: it clears the ID.
    let (_, _, id, _) = decoded(b"id: 1\nid:\n");
    assert_eq!(id, "");
}

#[test]
fn retry_takes_ascii_digits_only() {
    let retry = |text: &str| decoded(text.as_bytes()).3;
    assert_eq!(retry("retry: 1500\n"), Some(Duration::from_millis(1500)));
    assert_eq!(retry("retry:0\n"), Some(Duration::ZERO));
    for ignored in [
        "retry: 15x0\n",
        "retry: -1\n",
        "retry: +1\n",
        "retry: 1.5\n",
        "retry:  100\n",
        "retry: 100 \n",
        "retry: ١٢\n",
        "retry:\n",
        "retry\n",
        "retry: 99999999999999999999999\n",
        "Retry: 100\n",
    ] {
        assert_eq!(retry(ignored), None, "{ignored:?}");
    }
    // An ignored value leaves the last good one.
    assert_eq!(
        retry("retry: 10\nretry: ten\n"),
        Some(Duration::from_millis(10))
    );
    // `retry` changes no event.
    assert_eq!(events("retry: 5\ndata: a\n\n"), vec![message("a", "")]);
}

#[test]
fn unknown_fields_are_ignored() {
    assert_eq!(
        data("foo: bar\ndata: a\nData: b\ndata : c\n data: d\nDATA: e\nfoo\n\n"),
        ["a"]
    );
}

// Dispatch.

#[test]
fn an_event_with_empty_data_is_not_dispatched() {
    assert!(events("event: x\n\n").is_empty());
    assert!(events("id: 1\n\nretry: 1\n\n").is_empty());
    // Its event type does not carry over to the next event.
    assert_eq!(events("event: x\n\ndata: y\n\n"), vec![message("y", "")]);
    // A second blank line dispatches nothing more.
    assert_eq!(data("data: a\n\n\n\n"), ["a"]);
}

#[test]
fn the_end_of_the_stream_dispatches_nothing_and_hands_back_the_rest() {
    // The last event lacks its blank line: discarded, handed back for the caller to
    // report, with what it held so far.
    let (got, rest, ..) = decoded(b"data: a\n\nevent: done\ndata: [DONE]\n");
    assert_eq!(got, vec![message("a", "")]);
    assert_eq!(
        rest,
        Some(SseEvent {
            event: Some("done".into()),
            data: "[DONE]".into(),
            id: String::new(),
        })
    );
    // A line with no end is read as a line, to say what was cut.
    let (got, rest, ..) = decoded(b"data: [DONE]");
    assert!(got.is_empty());
    assert_eq!(rest, Some(message("[DONE]", "")));
    // A cut comment, or event type, is a rest too.
    assert_eq!(decoded(b"data: a\n\n: keep-al").1, Some(message("", "")));
    assert!(decoded(b"event: x\n").1.is_some());
    // Ended between events: no rest, `id` and `retry` lines included (they are applied
    // as they come).
    assert_eq!(decoded(b"data: a\n\n").1, None);
    assert_eq!(decoded(b"data: a\r\n\r\n").1, None);
    assert_eq!(decoded(b"data: a\n\nid: 3\nretry: 9\n").1, None);
    assert_eq!(decoded(b"").1, None);
}

// Limits.

#[test]
fn the_cap_is_enforced() {
    let mut decoder = SseDecoder::new(4);
    assert!(decoder.feed(b"data: 12345").is_none());
    let mut decoder = SseDecoder::new(12);
    assert_eq!(
        decoder.feed(b"data: 1\n\n").unwrap(),
        vec![message("1", "")]
    );
    assert_eq!(decoder.received(), 9);
    assert!(
        decoder.feed(b"data").is_none(),
        "the cap is on the whole stream"
    );
}
