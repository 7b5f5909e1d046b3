//! Helpers shared by the example test programs: checks that end the job with a clear
//! message and a non-zero exit status when a result is wrong.

#![allow(dead_code)]

/// Prints the failure with the rank and exits with status 1 (the launcher then ends the
/// job and reports the failure).
pub fn fail(rank: i32, what: std::fmt::Arguments<'_>) -> ! {
    eprintln!("rank {rank}: CHECK FAILED: {what}");
    std::process::exit(1)
}

/// `check!(rank, condition, "format", args...)`: fails the program unless `condition`.
#[macro_export]
macro_rules! check {
    ($rank:expr, $cond:expr, $($fmt:tt)+) => {
        if !$cond {
            $crate::common::fail($rank, format_args!("{} ({}:{}): {}", stringify!($cond), file!(), line!(), format_args!($($fmt)+)));
        }
    };
}

/// `check_eq!(rank, left, right, "context")`: fails unless `left == right`.
#[macro_export]
macro_rules! check_eq {
    ($rank:expr, $left:expr, $right:expr, $($fmt:tt)+) => {{
        let (l, r) = (&$left, &$right);
        if l != r {
            $crate::common::fail($rank, format_args!("{:?} != {:?} ({}:{}): {}", l, r, file!(), line!(), format_args!($($fmt)+)));
        }
    }};
}

/// Unwraps a result or fails the program with the error's message.
pub fn ok<T>(rank: i32, r: Result<T, oxmpi::Error>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => fail(rank, format_args!("{what}: unexpected error: {e}")),
    }
}
