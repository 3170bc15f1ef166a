package dev.keeptime;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The machine's timing-relevant configuration in a {@link ClockReport}, read
 * from {@code /proc} and {@code /sys}. Anything unreadable is empty (or
 * {@code false}): unknown, never a guess. Java cannot call
 * {@code clock_gettime(CLOCK_TAI)} or CPUID, so the TAI offset and the TSC's
 * frequencies stay empty, the tick rate comes from the kernel's build
 * configuration when it is readable, and high-resolution timers are known
 * only where {@code /proc/timer_list} is readable.
 *
 * @param os {@code os.name}, lower case ({@code "linux"}, …)
 * @param arch {@code os.arch} ({@code "amd64"}, …)
 * @param kernelRelease {@code /proc/sys/kernel/osrelease} ({@code uname -r})
 * @param kernelVersion {@code /proc/sys/kernel/version} ({@code uname -v});
 *     it names the preemption model
 * @param cpuModel the first processor's model name in {@code /proc/cpuinfo}
 * @param cpusOnline CPUs in {@code /sys/devices/system/cpu/online}
 * @param cpusAvailable {@link Runtime#availableProcessors()}
 * @param clocksource the current clocksource: {@code tsc} is read through
 *     the vDSO; {@code hpet}, {@code acpi_pm}, … make every read a system call
 * @param availableClocksources the clocksources the kernel could switch to
 * @param tsc the TSC's flags from {@code /proc/cpuinfo}; empty without a TSC
 * @param timerSlackNs the inspecting thread's timer slack, ns
 * @param tickHz the kernel tick rate (CONFIG_HZ, from {@code /proc/config.gz}
 *     or {@code /boot/config-<release>})
 * @param highResolutionTimers whether high-resolution timers are active
 * @param idleDriver the cpuidle driver ({@code intel_idle}, {@code haltpoll}, {@code none}, …)
 * @param idleStates CPU 0's idle states, shallowest first
 * @param cpufreqDriver CPU 0's cpufreq driver
 * @param cpufreqGovernor CPU 0's cpufreq governor ({@code performance}, {@code powersave}, …)
 * @param virtualization the hypervisor this runs under; empty without a sign of one
 * @param stealFraction share (0–1) of CPU time the hypervisor took since boot
 * @param preemption the kernel's preemption model
 * @param preemptionMode for {@link Preemption#DYNAMIC}, the mode chosen at
 *     boot ({@code none}, {@code voluntary}, {@code full}, {@code lazy})
 * @param taiOffsetS CLOCK_TAI − CLOCK_REALTIME in whole seconds
 */
public record MachineInfo(
        String os,
        String arch,
        Optional<String> kernelRelease,
        Optional<String> kernelVersion,
        Optional<String> cpuModel,
        OptionalInt cpusOnline,
        OptionalInt cpusAvailable,
        Optional<String> clocksource,
        List<String> availableClocksources,
        Optional<Tsc> tsc,
        OptionalLong timerSlackNs,
        OptionalLong tickHz,
        Optional<Boolean> highResolutionTimers,
        Optional<String> idleDriver,
        List<IdleState> idleStates,
        Optional<String> cpufreqDriver,
        Optional<String> cpufreqGovernor,
        Optional<Virtualization> virtualization,
        OptionalDouble stealFraction,
        Preemption preemption,
        Optional<String> preemptionMode,
        OptionalLong taiOffsetS) {

    /**
     * Checks the components are present and copies the lists.
     *
     * @param os the OS
     * @param arch the architecture
     * @param kernelRelease uname -r
     * @param kernelVersion uname -v
     * @param cpuModel the CPU model
     * @param cpusOnline CPUs online
     * @param cpusAvailable CPUs available
     * @param clocksource the clocksource
     * @param availableClocksources the available clocksources
     * @param tsc the TSC's flags
     * @param timerSlackNs the timer slack
     * @param tickHz the tick rate
     * @param highResolutionTimers whether high-resolution timers are on
     * @param idleDriver the cpuidle driver
     * @param idleStates the idle states
     * @param cpufreqDriver the cpufreq driver
     * @param cpufreqGovernor the cpufreq governor
     * @param virtualization the hypervisor
     * @param stealFraction the steal share
     * @param preemption the preemption model
     * @param preemptionMode the dynamic preemption mode
     * @param taiOffsetS the TAI offset
     * @throws NullPointerException if a component is null
     */
    public MachineInfo {
        Objects.requireNonNull(os, "os");
        Objects.requireNonNull(arch, "arch");
        Objects.requireNonNull(kernelRelease, "kernelRelease");
        Objects.requireNonNull(kernelVersion, "kernelVersion");
        Objects.requireNonNull(cpuModel, "cpuModel");
        Objects.requireNonNull(cpusOnline, "cpusOnline");
        Objects.requireNonNull(cpusAvailable, "cpusAvailable");
        Objects.requireNonNull(clocksource, "clocksource");
        availableClocksources = List.copyOf(availableClocksources);
        Objects.requireNonNull(tsc, "tsc");
        Objects.requireNonNull(timerSlackNs, "timerSlackNs");
        Objects.requireNonNull(tickHz, "tickHz");
        Objects.requireNonNull(highResolutionTimers, "highResolutionTimers");
        Objects.requireNonNull(idleDriver, "idleDriver");
        idleStates = List.copyOf(idleStates);
        Objects.requireNonNull(cpufreqDriver, "cpufreqDriver");
        Objects.requireNonNull(cpufreqGovernor, "cpufreqGovernor");
        Objects.requireNonNull(virtualization, "virtualization");
        Objects.requireNonNull(stealFraction, "stealFraction");
        Objects.requireNonNull(preemption, "preemption");
        Objects.requireNonNull(preemptionMode, "preemptionMode");
        Objects.requireNonNull(taiOffsetS, "taiOffsetS");
    }

    /**
     * The TSC as {@code /proc/cpuinfo} describes it.
     *
     * @param constantTsc it ticks at a fixed rate whatever the CPU frequency
     * @param nonstopTsc it keeps ticking in deep idle states
     * @param tscKnownFreq the kernel got its frequency from the CPU or hypervisor
     * @param tscReliable the kernel trusts it without watchdog checks
     * @param rdtscp the {@code rdtscp} instruction is available
     * @param reportedFrequencyHz the frequency the CPU or hypervisor states
     * @param measuredFrequencyHz the frequency counted against CLOCK_MONOTONIC_RAW
     */
    public record Tsc(
            boolean constantTsc,
            boolean nonstopTsc,
            boolean tscKnownFreq,
            boolean tscReliable,
            boolean rdtscp,
            OptionalLong reportedFrequencyHz,
            OptionalLong measuredFrequencyHz) {
        /**
         * Checks the frequencies are present.
         *
         * @param constantTsc fixed rate
         * @param nonstopTsc ticks in deep idle
         * @param tscKnownFreq frequency known
         * @param tscReliable trusted
         * @param rdtscp rdtscp available
         * @param reportedFrequencyHz stated frequency
         * @param measuredFrequencyHz measured frequency
         * @throws NullPointerException if a frequency is null
         */
        public Tsc {
            Objects.requireNonNull(reportedFrequencyHz, "reportedFrequencyHz");
            Objects.requireNonNull(measuredFrequencyHz, "measuredFrequencyHz");
        }

        /**
         * Constant rate and never stops: TSC ticks convert to time.
         *
         * @return whether both flags are set
         */
        public boolean invariant() {
            return constantTsc && nonstopTsc;
        }
    }

    /**
     * One CPU idle state (C-state) and what waking from it costs.
     *
     * @param name the state's name ({@code POLL}, {@code C1}, {@code C6}, …)
     * @param exitLatencyUs worst-case time to wake from it, µs
     * @param targetResidencyUs shortest idle period for which the kernel chooses it, µs
     * @param disabled whether it is disabled (for CPU 0)
     */
    public record IdleState(String name, long exitLatencyUs, OptionalLong targetResidencyUs, boolean disabled) {
        /**
         * Checks the components.
         *
         * @param name the name
         * @param exitLatencyUs the exit latency
         * @param targetResidencyUs the target residency
         * @param disabled whether disabled
         * @throws NullPointerException if a component is null
         */
        public IdleState {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(targetResidencyUs, "targetResidencyUs");
        }
    }

    /**
     * The hypervisor a machine runs under and how that was found out.
     *
     * @param hypervisor {@code KVM}, {@code Xen}, {@code VMware}, …;
     *     {@code unknown} when only the CPU's hypervisor flag says so
     * @param source where it came from ({@code /sys/hypervisor/type},
     *     {@code /sys/class/dmi/id}, {@code /proc/cpuinfo}, …)
     */
    public record Virtualization(String hypervisor, String source) {
        /**
         * Checks the components.
         *
         * @param hypervisor the hypervisor
         * @param source where it came from
         * @throws NullPointerException if a component is null
         */
        public Virtualization {
            Objects.requireNonNull(hypervisor, "hypervisor");
            Objects.requireNonNull(source, "source");
        }
    }

    /** How the kernel was built to preempt running kernel code. */
    public enum Preemption {
        /** PREEMPT_RT: the lowest wake-up latency Linux offers. */
        RT("rt"),
        /** PREEMPT: kernel code is preemptible outside critical sections. */
        FULL("full"),
        /** PREEMPT_DYNAMIC: chosen at boot, see {@link MachineInfo#preemptionMode()}. */
        DYNAMIC("dynamic"),
        /** No PREEMPT flag: kernel code yields only at explicit points. */
        NONE_OR_VOLUNTARY("none_or_voluntary"),
        /** Not known. */
        UNKNOWN("unknown");

        private final String jsonName;

        Preemption(String jsonName) {
            this.jsonName = jsonName;
        }

        /**
         * The name in the report's JSON form.
         *
         * @return {@code "rt"}, {@code "full"}, {@code "dynamic"},
         *     {@code "none_or_voluntary"} or {@code "unknown"}
         */
        public String jsonName() {
            return jsonName;
        }

        /**
         * The model with this JSON name.
         *
         * @param name a JSON name
         * @return the model
         * @throws IllegalArgumentException for an unknown name
         */
        public static Preemption fromJsonName(String name) {
            for (Preemption p : values()) {
                if (p.jsonName.equals(name)) {
                    return p;
                }
            }
            throw new IllegalArgumentException("not a preemption model: " + name);
        }
    }
}
