//! `math_guy`: arithmetic on sly_data `x` and `y`, answered in sly_data `equals`.

use serde_json::{Value, json};

use super::{Reply, Turn, number, object};

/// An arithmetic operation, and the words that name it.
#[derive(Debug, Clone, Copy)]
enum Operation {
    Multiply,
    Add,
    Subtract,
    Divide,
}

impl Operation {
    /// The operations in the order they are looked for, each with the words that name it.
    const WORDS: [(Operation, &'static [&'static str]); 4] = [
        (Operation::Multiply, &["times", "multipl", "product"]),
        (Operation::Add, &["plus", "add", "sum"]),
        (Operation::Subtract, &["minus", "subtract", "difference"]),
        (Operation::Divide, &["divide", "quotient"]),
    ];

    /// The first operation whose word appears anywhere in `text`, ignoring case.
    fn find(text: &str) -> Option<Operation> {
        let text = text.to_lowercase();
        Operation::WORDS
            .iter()
            .find(|(_, words)| words.iter().any(|word| text.contains(word)))
            .map(|(operation, _)| *operation)
    }

    fn name(self) -> &'static str {
        match self {
            Operation::Multiply => "multiply",
            Operation::Add => "add",
            Operation::Subtract => "subtract",
            Operation::Divide => "divide",
        }
    }
}

pub(super) fn reply(turn: &Turn<'_>) -> Reply {
    let x = number(turn.sly("x"));
    let y = number(turn.sly("y"));
    let operation = Operation::find(turn.text);
    let mut reply = Reply {
        tool_args: json!({
            "operation": operation.map(Operation::name),
            "x": turn.sly("x").cloned().unwrap_or(Value::Null),
            "y": turn.sly("y").cloned().unwrap_or(Value::Null),
        }),
        ..Reply::default()
    };
    let (Some(x), Some(y)) = (x, y) else {
        reply.text = "Please give me the numbers as sly_data x and y.".to_owned();
        reply.tool_result = json!({"error": "x and y are missing"});
        return reply;
    };
    let Some(operation) = operation else {
        reply.text = "Tell me whether to add, subtract, multiply or divide x and y.".to_owned();
        reply.tool_result = json!({"error": "no operation"});
        return reply;
    };
    let result = match operation {
        Operation::Multiply => x * y,
        Operation::Add => x + y,
        Operation::Subtract => x - y,
        Operation::Divide if y == 0.0 => {
            reply.text = "I cannot divide by zero: y is 0.".to_owned();
            reply.tool_result = json!({"error": "division by zero"});
            return reply;
        }
        Operation::Divide => x / y,
    };
    let Some(equals) = serde_json::Number::from_f64(result) else {
        reply.text = "The result is not a finite number.".to_owned();
        reply.tool_result = json!({"error": "not a finite number"});
        return reply;
    };
    reply.text = "Check sly_data['equals'] for the result".to_owned();
    reply.tool_result = json!({"equals": equals});
    reply.sly_data = Some(object("equals", Value::Number(equals)));
    reply
}
