/* Every test case of the runner, in the order they run. */
#ifndef KT_TESTS_H
#define KT_TESTS_H

#define KT_TESTS(X)                     \
    X(status_strings_and_version)       \
    X(status_enums_match_the_abi)       \
    X(errors_sleep)                     \
    X(errors_sleeper)                   \
    X(errors_ticker)                    \
    X(errors_schedule)                  \
    X(errors_clocks)                    \
    X(errors_tail_target)               \
    X(free_null_is_a_noop)              \
    X(spec_ticker_vectors)              \
    X(schedule_saturates_and_never_panics) \
    X(now_is_clock_monotonic)           \
    X(sleep_never_early)                \
    X(sleep_until_never_early)          \
    X(sleeper_modes_never_early)        \
    X(sleeper_efficient_returns)        \
    X(tail_target_round_trips)          \
    X(sleeper_stats_invariants)         \
    X(sleeper_stats_by_mode)            \
    X(threads_never_early)              \
    X(ticker_never_early_and_no_drift)  \
    X(ticker_policies_on_a_late_loop)   \
    X(ticker_reset_and_set_period)      \
    X(ticker_from_a_sleepers_settings)  \
    X(interrupt_stops_a_long_sleep)     \
    X(interrupt_stops_a_ticker_wait)    \
    X(clocks_json_report)               \
    X(clock_findings_vectors)           \
    X(errors_clock_findings)            \
    X(delay_errors)                     \
    X(delay_never_early)                \
    X(delay_cancel_stops_callbacks)     \
    X(delay_many_at_once)               \
    X(idle_hint_abi_and_bad_values)     \
    X(idle_hint_strictest_live_value_is_in_force) \
    X(idle_hint_refused_warns_once)     \
    X(profile_loads_and_its_sleepers_are_never_early) \
    X(default_profile_sets_and_clears) \
    X(profile_of_another_machine_is_refused) \
    X(profile_bad_files_and_arguments) \
    X(thread_profile_is_what_the_free_functions_learned) \
    X(keeptime_profile_env_reaches_the_free_functions)

#define KT_DECLARE(name) void test_##name(void);
KT_TESTS(KT_DECLARE)
#undef KT_DECLARE

/* Child cases: each runs in a process of its own, started by a test with
 * kt_run_child (harness.h), for what a process does once. */
#define KT_CHILDREN(X)                  \
    X(env_profile_loaded)               \
    X(env_profile_asked_first)          \
    X(env_profile_fresh)                \
    X(env_profile_program_first)

#define KT_DECLARE_CHILD(name) void child_##name(const char *arg);
KT_CHILDREN(KT_DECLARE_CHILD)
#undef KT_DECLARE_CHILD

#endif
