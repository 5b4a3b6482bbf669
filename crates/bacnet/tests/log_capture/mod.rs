//! Log lines of the drivers (they log through `tracing`) captured in a test binary:
//! `LEVEL message name=value ...` of every event at INFO and above.
#![allow(clippy::unwrap_used, dead_code)]

/// Log lines captured by [`capture_logs`] (the drivers log through `tracing`).
static LINES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The `message` of an event, then its fields as ` name=value`.
#[derive(Default)]
struct Message(String, String);

impl tracing::field::Visit for Message {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        } else {
            self.1 += &format!(" {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0 = value.to_owned();
        } else {
            self.1 += &format!(" {}={value}", field.name());
        }
    }
}

/// Keeps `LEVEL message name=value...` of every event at INFO and above.
struct Capture;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let level = *event.metadata().level();
        if level <= tracing::Level::INFO {
            let mut message = Message::default();
            event.record(&mut message);
            let line = format!("{level} {}{}", message.0, message.1);
            if std::env::var_os("SC_TEST_LOG").is_some() {
                eprintln!("{line}");
            }
            LINES.lock().unwrap().push(line);
        }
    }
}

/// Installs the capturing subscriber (once per test binary).
pub fn capture_logs() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let subscriber = tracing_subscriber::registry().with(Capture);
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// The captured log lines containing `needle`.
pub fn logged(needle: &str) -> Vec<String> {
    LINES
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(needle))
        .cloned()
        .collect()
}
