// The clock report spec's finding vectors (spec/vectors/clocks.json), replayed
// through KeepTime.ClockFindingsJson as the C tests replay them through
// kt_clock_findings_json: one NUnit case per vector, severities and codes in
// order (messages are the core's words).
using System;
using System.Collections.Generic;
using System.IO;
using NUnit.Framework;

namespace Dev.KeepTime.Tests
{
    [TestFixture]
    public class ClockVectorTests
    {
        private static Json Doc()
        {
            return Json.Parse(File.ReadAllText(Path.Combine(VectorTests.SpecDir, "vectors", "clocks.json")));
        }

        public static IEnumerable<TestCaseData> Cases()
        {
            foreach (var c in Doc()["cases"].Items)
                yield return new TestCaseData(c).SetName("clocks_vector_" + c["name"].Text.Replace(' ', '_'));
        }

        [Test]
        public void TheVectorFileHasCases()
        {
            Assert.That(Doc()["cases"].Items.Count, Is.GreaterThanOrEqualTo(15));
        }

        [TestCaseSource("Cases")]
        public void Replay(object vector)
        {
            var c = (Json)vector;
            string idle = c.Has("idle_latency") ? c["idle_latency"].ToJson() : "null";
            string parts = "{\"clocks\":" + c["clocks"].ToJson() + ",\"machine\":" + c["machine"].ToJson() +
                ",\"idle_latency\":" + idle + "}";
            var got = Json.Parse(KeepTime.ClockFindingsJson(parts)).Items;
            var want = c["findings"].Items;
            Assert.That(got.Count, Is.EqualTo(want.Count), "findings of " + parts);
            for (int i = 0; i < want.Count; i++)
            {
                Assert.That(got[i]["severity"].Text, Is.EqualTo(want[i]["severity"].Text), "severity of finding " + i);
                Assert.That(got[i]["code"].Text, Is.EqualTo(want[i]["code"].Text), "code of finding " + i);
                Assert.That(got[i]["message"].Text, Is.Not.Empty, "message of finding " + i);
            }
        }

        [Test]
        public void BadPartsAreArgumentErrors()
        {
            Assert.Throws<ArgumentNullException>(() => KeepTime.ClockFindingsJson(null));
            Assert.Throws<ArgumentException>(() => KeepTime.ClockFindingsJson("not json"));
            Assert.Throws<ArgumentException>(() => KeepTime.ClockFindingsJson("{\"clocks\": 3, \"machine\": {}}"));
            Assert.That(KeepTime.ClockFindingsJson("{\"clocks\": [], \"machine\": {\"os\": \"linux\", \"arch\": \"x86_64\"}}"), Is.EqualTo("[]"));
        }
    }
}
