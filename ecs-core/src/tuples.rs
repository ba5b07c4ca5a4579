//! The one macro that implements a trait for every tuple arity the crate
//! supports (0 to 15 elements).

/// Calls `$m!(T0 0, T1 1, ..)` (type parameter name, tuple index) for each
/// arity from 0 to 15.
macro_rules! all_tuples {
    ($m:ident) => {
        $m!();
        $m!(T0 0);
        $m!(T0 0, T1 1);
        $m!(T0 0, T1 1, T2 2);
        $m!(T0 0, T1 1, T2 2, T3 3);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13);
        $m!(T0 0, T1 1, T2 2, T3 3, T4 4, T5 5, T6 6, T7 7, T8 8, T9 9, T10 10, T11 11, T12 12, T13 13, T14 14);
    };
}

pub(crate) use all_tuples;
