mod soak;
