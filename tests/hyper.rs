#![cfg(feature = "hyper")]
