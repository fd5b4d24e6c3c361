package io.rdmx.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The code in the documents is the code the tests run: every fenced block announced by
 * {@code <!-- snippet: Class#tag -->} in README.md or docs/*.md equals the region of
 * {@code examples/src/main/java/io/rdmx/examples/Class.java} between {@code // tag::tag[]} and
 * {@code // end::tag[]} (indentation removed), and every tagged region is shown somewhere.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SnippetsTest {
    private static final Pattern MARKER = Pattern.compile("<!-- snippet: (\\w+)#([\\w-]+) -->");
    private static final Pattern TAG = Pattern.compile("(?m)^\\s*// tag::([\\w-]+)\\[\\]$");

    /** A snippet in a document. */
    private record Snippet(Path doc, int line, String type, String tag, String code) {
    }

    static Path repoRoot() {
        for (Path p = Paths.get("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path pom = p.resolve("pom.xml");
            try {
                if (Files.isRegularFile(pom)
                    && Files.readString(pom, StandardCharsets.UTF_8).contains("<artifactId>rdmx-parent</artifactId>")
                    && Files.isDirectory(p.resolve("core"))) {
                    return p;
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + pom, e);
            }
        }
        throw new IllegalStateException("no rdmx-parent pom.xml above " + Paths.get("").toAbsolutePath());
    }

    static List<Path> documents(Path root) throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        Path dir = root.resolve("docs");
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                docs.addAll(s.filter(p -> p.toString().endsWith(".md")).sorted().collect(Collectors.toList()));
            }
        }
        return docs;
    }

    static List<Snippet> snippets(Path doc) throws IOException {
        List<String> lines = Files.readAllLines(doc, StandardCharsets.UTF_8);
        List<Snippet> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = MARKER.matcher(lines.get(i));
            if (!m.find()) {
                continue;
            }
            int open = i + 1;
            if (open >= lines.size() || !lines.get(open).trim().equals("```java")) {
                fail(doc + ":" + (i + 1) + ": a snippet marker must be followed by a ```java block");
            }
            StringBuilder code = new StringBuilder();
            int j = open + 1;
            for (; j < lines.size() && !lines.get(j).trim().equals("```"); j++) {
                code.append(lines.get(j)).append('\n');
            }
            if (j == lines.size()) {
                fail(doc + ":" + (open + 1) + ": unterminated code block");
            }
            out.add(new Snippet(doc, i + 1, m.group(1), m.group(2), code.toString()));
            i = j;
        }
        return out;
    }

    static Path source(Path root, String type) {
        return root.resolve("examples/src/main/java/io/rdmx/examples/" + type + ".java");
    }

    /** The lines between the tag's markers, without their common indentation. */
    static String region(Path source, String tag) throws IOException {
        List<String> lines = Files.readAllLines(source, StandardCharsets.UTF_8);
        int from = -1;
        int to = -1;
        for (int i = 0; i < lines.size(); i++) {
            String t = lines.get(i).trim();
            if (t.equals("// tag::" + tag + "[]")) {
                from = i + 1;
            } else if (t.equals("// end::" + tag + "[]")) {
                to = i;
            }
        }
        if (from < 0 || to < from) {
            fail(source + ": no region tag::" + tag + "[] ... end::" + tag + "[]");
        }
        List<String> body = lines.subList(from, to);
        int indent = Integer.MAX_VALUE;
        for (String l : body) {
            if (!l.isBlank()) {
                indent = Math.min(indent, l.length() - l.stripLeading().length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String l : body) {
            sb.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
        }
        return sb.toString();
    }

    @Test
    void everySnippetInTheDocumentsIsItsTaggedRegion() throws IOException {
        Path root = repoRoot();
        int checked = 0;
        for (Path doc : documents(root)) {
            for (Snippet s : snippets(doc)) {
                Path src = source(root, s.type());
                assertTrue(Files.isRegularFile(src), s.doc() + ":" + s.line() + ": no example class " + src);
                assertEquals(region(src, s.tag()), s.code(), s.doc() + ":" + s.line() + " differs from "
                    + root.relativize(src) + " tag::" + s.tag() + "[] (copy the region into the document)");
                checked++;
            }
        }
        assertTrue(checked >= 3, "README's three examples are checked: " + checked);
    }

    @Test
    void everyTaggedRegionIsShownInADocument() throws IOException {
        Path root = repoRoot();
        Set<String> shown = new TreeSet<>();
        for (Path doc : documents(root)) {
            for (Snippet s : snippets(doc)) {
                shown.add(s.type() + "#" + s.tag());
            }
        }
        Set<String> tagged = new TreeSet<>();
        try (Stream<Path> files = Files.list(root.resolve("examples/src/main/java/io/rdmx/examples"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String type = f.getFileName().toString().replace(".java", "");
                Matcher m = TAG.matcher(Files.readString(f, StandardCharsets.UTF_8));
                while (m.find()) {
                    tagged.add(type + "#" + m.group(1));
                }
            }
        }
        assertFalse(tagged.isEmpty(), "the examples have tagged regions");
        tagged.removeAll(shown);
        assertEquals(Set.of(), tagged, "tagged regions no document shows");
    }
}
