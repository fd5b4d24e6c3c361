package io.rdmx.transport;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A provider on the class path that this JVM cannot load (the verbs provider, compiled for Java 22, on Java 17):
 * listed under the name its class suggests, unusable, with the reason and the fix, instead of breaking every
 * look-up of every other provider.
 */
final class UnloadableFabric implements Fabric {
    private static final Pattern CLASS_IN_MESSAGE = Pattern.compile(
        "(?:Provider )?([A-Za-z_$][\\w$]*(?:[./][A-Za-z_$][\\w$]*)+)(?: has been compiled| could not be| not a)");
    private static final Pattern CLASS_VERSION = Pattern.compile("class file version (\\d+)");

    private final String name;
    private final String reason;

    private UnloadableFabric(String name, String reason) {
        this.name = name;
        this.reason = reason;
    }

    /**
     * @param e what loading the provider threw
     * @return a placeholder naming the provider's class and the cause
     */
    static UnloadableFabric of(Throwable e) {
        String message = String.valueOf(e.getMessage());
        Throwable cause = e.getCause();
        String all = message + (cause != null ? " " + cause.getMessage() : "");
        Matcher m = CLASS_IN_MESSAGE.matcher(all);
        String cls = m.find() ? m.group(1).replace('/', '.') : "unknown";
        String simple = cls.substring(cls.lastIndexOf('.') + 1);
        String name = simple.endsWith("Fabric") && simple.length() > 6
            ? simple.substring(0, simple.length() - 6).toLowerCase(Locale.ROOT) : simple.toLowerCase(Locale.ROOT);
        Matcher v = CLASS_VERSION.matcher(all);
        String reason;
        if (v.find()) {
            int needs = Integer.parseInt(v.group(1)) - 44;
            reason = "provider " + cls + " needs Java " + needs + "+ (this JVM is Java " + Runtime.version().feature()
                + "): run with a JDK " + needs + " or newer";
        } else {
            reason = "provider " + cls + " cannot be loaded: " + (cause != null ? cause : e);
        }
        return new UnloadableFabric(name, reason);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Availability availability() {
        return Availability.unusable(reason);
    }

    @Override
    public Node open(NodeOptions options) throws RdmxException {
        throw new RdmxException(name + " provider unusable here: " + reason);
    }
}
