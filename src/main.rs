fn main() {
    println!("horst: skeleton; see ARCHITECTURE.md");
}
