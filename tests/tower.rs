#![cfg(feature = "tower")]
