//! `music_nerd_pro`: songs to bands and bands to home towns from a fixed table, with the
//! band remembered across turns and a running cost of 3.0 per turn, both carried in the
//! chat_context.

use serde_json::{Map, Value, json};

use super::{Reply, Turn};

/// What one turn costs.
const COST_PER_TURN: f64 = 3.0;

/// A band: its name, how to spot it in text (lowercase), and its home town.
struct Band {
    name: &'static str,
    key: &'static str,
    home: &'static str,
}

const BANDS: [Band; 10] = [
    Band {
        name: "The Beatles",
        key: "beatles",
        home: "Liverpool, England",
    },
    Band {
        name: "Queen",
        key: "queen",
        home: "London, England",
    },
    Band {
        name: "Nirvana",
        key: "nirvana",
        home: "Aberdeen, Washington",
    },
    Band {
        name: "Led Zeppelin",
        key: "led zeppelin",
        home: "London, England",
    },
    Band {
        name: "Eagles",
        key: "eagles",
        home: "Los Angeles, California",
    },
    Band {
        name: "Oasis",
        key: "oasis",
        home: "Manchester, England",
    },
    Band {
        name: "Guns N' Roses",
        key: "guns n",
        home: "Los Angeles, California",
    },
    Band {
        name: "The Rolling Stones",
        key: "rolling stones",
        home: "London, England",
    },
    Band {
        name: "R.E.M.",
        key: "r.e.m",
        home: "Athens, Georgia",
    },
    Band {
        name: "a-ha",
        key: "a-ha",
        home: "Oslo, Norway",
    },
];

/// A song: its title, how to spot it in text (lowercase), and its band's index in [`BANDS`].
struct Song {
    title: &'static str,
    key: &'static str,
    band: usize,
}

const SONGS: [Song; 11] = [
    Song {
        title: "Yellow Submarine",
        key: "yellow submarine",
        band: 0,
    },
    Song {
        title: "Hey Jude",
        key: "hey jude",
        band: 0,
    },
    Song {
        title: "Bohemian Rhapsody",
        key: "bohemian rhapsody",
        band: 1,
    },
    Song {
        title: "Smells Like Teen Spirit",
        key: "teen spirit",
        band: 2,
    },
    Song {
        title: "Stairway to Heaven",
        key: "stairway to heaven",
        band: 3,
    },
    Song {
        title: "Hotel California",
        key: "hotel california",
        band: 4,
    },
    Song {
        title: "Wonderwall",
        key: "wonderwall",
        band: 5,
    },
    Song {
        title: "Sweet Child o' Mine",
        key: "sweet child",
        band: 6,
    },
    Song {
        title: "Paint It Black",
        key: "paint it black",
        band: 7,
    },
    Song {
        title: "Losing My Religion",
        key: "losing my religion",
        band: 8,
    },
    Song {
        title: "Take On Me",
        key: "take on me",
        band: 9,
    },
];

/// The song named in `text`.
fn find_song(text: &str) -> Option<&'static Song> {
    let text = text.to_lowercase();
    SONGS.iter().find(|song| text.contains(song.key))
}

/// The band that `text` names, directly or through one of its songs.
fn find_band(text: &str) -> Option<&'static Band> {
    if let Some(song) = find_song(text) {
        return Some(&BANDS[song.band]);
    }
    let text = text.to_lowercase();
    BANDS.iter().find(|band| text.contains(band.key))
}

/// The band most recently talked about in the conversation.
fn remembered_band(history: &[Value]) -> Option<&'static Band> {
    history
        .iter()
        .rev()
        .filter_map(|message| message.get("text").and_then(Value::as_str))
        .find_map(find_band)
}

/// Whether `text` asks where a band comes from.
fn asks_where(text: &str) -> bool {
    let text = text.to_lowercase();
    ["where", "from", "home"]
        .iter()
        .any(|word| text.contains(word))
}

/// The answer sentence to `text`.
fn answer(turn: &Turn<'_>) -> String {
    if asks_where(turn.text) {
        return match find_band(turn.text).or_else(|| remembered_band(turn.history)) {
            Some(band) => format!("{} are from {}.", band.name, band.home),
            None => "Which band do you mean? Ask me about a song first.".to_owned(),
        };
    }
    if let Some(song) = find_song(turn.text) {
        let band = &BANDS[song.band];
        return format!("{} was recorded by {}.", song.title, band.name);
    }
    if let Some(band) = find_band(turn.text) {
        return format!("{} are a band from {}.", band.name, band.home);
    }
    let titles: Vec<&str> = SONGS.iter().map(|song| song.title).collect();
    format!("I only know these songs: {}.", titles.join(", "))
}

pub(super) fn reply(turn: &Turn<'_>) -> Reply {
    let turns = turn.previous_turns();
    let before = COST_PER_TURN * turns as f64;
    let running_cost = before + COST_PER_TURN;
    let text = answer(turn);
    let mut structure = Map::new();
    structure.insert("answer".to_owned(), Value::String(text.clone()));
    structure.insert("running_cost".to_owned(), json!(running_cost));
    Reply {
        text,
        structure: Some(structure),
        sly_data: None,
        tool_args: json!({"running_cost": before}),
        tool_result: json!({"running_cost": running_cost}),
        delay: None,
    }
}
