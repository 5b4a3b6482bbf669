fn main() {
    std::process::exit(buildwire_cli::run(std::env::args().collect()));
}
