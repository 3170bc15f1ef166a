# The Java library (java/): pure Java, Maven, JDK 17 baseline with a
# JDK 22+ variant (FFM timer slack) in a multi-release jar.
#
#   make test-java    JDK 25 builds the multi-release jar and runs the JUnit
#                     suite against that jar on JDK 25 and on JDK 17; then JDK 17
#                     builds and tests on its own (the baseline build).
#   make bench-java   the Java benchmark on JDK 25 (timer slack 1 ns via FFM),
#                     then the same jar on JDK 17 (~1.5 min each), measured from
#                     the caller; keeptime at the 5 %, 1 % and 0.1 % tail
#                     targets with each sleeper's stats, and its targets
#                     against the same run's pure spin (met/MISSED);
#                     then the crowd row (16 threads × 1 ms, ~13 s; --crowd N, 0 = off);
#                     JAVA_BENCH_ARGS="--scale 0.25" for a quicker, noisier run.
#
# Maven downloads its plugins and the test dependencies (JUnit, Jackson) from
# Maven Central on the first run; later runs work offline.

JDK17_HOME ?= $(firstword $(wildcard /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/temurin-17-jdk-amd64 /usr/lib/jvm/java-17-openjdk))
JDK25_HOME ?= $(firstword $(wildcard /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/java-25-openjdk-amd64 /usr/lib/jvm/java-25-openjdk))
MVN ?= mvn
# Maven 3.8's Guava touches sun.misc.Unsafe: keep JDK 25's warning out of the output.
MVN_25 := cd java && JAVA_HOME=$(JDK25_HOME) MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow" $(MVN) -q -B -Dstyle.color=never
MVN_17 := cd java && JAVA_HOME=$(JDK17_HOME) $(MVN) -q -B -Dstyle.color=never
JAVA_JAR := java/target/keeptime-0.1.0.jar
JAVA_BENCH_ARGS ?=

TEST_TARGETS += test-java

.PHONY: test-java bench-java java-jar

test-java:
	@test -x "$(JDK17_HOME)/bin/java" || { echo "test-java: no JDK 17 (set JDK17_HOME)"; exit 1; }
	@test -x "$(JDK25_HOME)/bin/java" || { echo "test-java: no JDK 25 (set JDK25_HOME)"; exit 1; }
	@# failsafe merges into an existing summary: a stale failure would fail this run.
	rm -rf java/target/failsafe-reports java/target/jdk17/failsafe-reports
	$(MVN_25) verify -Dkeeptime.jdk17=$(JDK17_HOME)
	$(MVN_17) verify -Dkeeptime.buildDir=target/jdk17
	@echo "test-java: JUnit suite passed on JDK 25 and JDK 17 (multi-release jar built by JDK 25), and on a JDK 17 build"

java-jar:
	$(MVN_25) package -DskipITs

# Results in the project's format: java/target/bench-jdk25.json, bench-jdk17.json.
bench-java: java-jar
	$(JDK25_HOME)/bin/java -jar $(JAVA_JAR) --export-json java/target/bench-jdk25.json $(JAVA_BENCH_ARGS)
	$(JDK17_HOME)/bin/java -jar $(JAVA_JAR) --export-json java/target/bench-jdk17.json $(JAVA_BENCH_ARGS)
