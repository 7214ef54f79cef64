fn main() {
    println!("gpuio: the command-line interface is not built yet");
}
