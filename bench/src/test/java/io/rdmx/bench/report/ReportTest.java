package io.rdmx.bench.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The chart of a report: never empty when it has comparisons. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReportTest {
    private static final Pattern BAR = Pattern.compile("<rect x=\"\\d+\" y=\"\\d+\" width=\"\\d+\" height=\"(\\d+)\" "
        + "fill=\"(#999999|#2b6cb0)\"/>");

    private static int bars(String svg, String fill) {
        Matcher m = BAR.matcher(svg);
        int n = 0;
        while (m.find()) {
            if (m.group(2).equals(fill)) {
                n++;
            }
        }
        return n;
    }

    @Test
    void aReportWithComparisonsAndNoPanelsDrawsEachComparisonBesideItsBaseline() {
        // queries --hosts gave no panels, and its chart was its title alone
        Report r = new Report("t", true)
            .lowerIsBetter("Q1 P=2 W=1 rdmx vs sockets", 0.5, 1.0, "s", null)
            .lowerIsBetter("Q2 P=2 W=1 rdmx vs sockets", 2.0, 1.0, "s", null)
            .higherIsBetter("stream", 30, 60, "M msgs/s", null);
        String svg = r.svg();
        assertEquals(3, bars(svg, "#2b6cb0"), svg);
        assertEquals(3, bars(svg, "#999999"), svg);
        assertEquals(2, r.drawnPanels().size(), "a panel per unit");
        assertTrue(svg.contains("Q1 P=2 W=1 rdmx vs sockets"), svg);
    }

    @Test
    void givenPanelsAreDrawnAsGiven() {
        Report r = new Report("t", true).lowerIsBetter("x", 1, 2, "s", null)
            .panel(new Report.Panel("p", "s", List.of(new Report.Bar("a", 1, false))));
        String svg = r.svg();
        assertEquals(1, bars(svg, "#2b6cb0"), svg);
        assertEquals(0, bars(svg, "#999999"), svg);
    }

    @Test
    void aReportWithNothingDrawsNoBar() {
        String svg = new Report("t", true).svg();
        assertEquals(0, bars(svg, "#2b6cb0") + bars(svg, "#999999"), svg);
    }
}
