package io.rdmx.shuffle;

import java.util.Arrays;

/**
 * What {@link Routing#byKey} hashes an object row by, the same in every process: the value of an {@code Integer},
 * {@code Long}, {@code Short} or {@code Byte} (as {@link Routing#routeKey} routes the int and long rows of a
 * fixed-width exchange), the contents of a primitive array (the rows of {@link RowSerializer#BYTES} and
 * {@link RowSerializer#LONGS}: their {@code hashCode()} is the identity hash, different for equal arrays and in
 * every process), an enum's ordinal, and otherwise {@code hashCode()}, which the row's class must override.
 */
final class RowKeys {
    /** Per class: whether its {@code hashCode()} is {@link Object}'s (the identity hash). */
    private static final ClassValue<Boolean> IDENTITY_HASH = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            try {
                return type.getMethod("hashCode").getDeclaringClass() == Object.class;
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException("no hashCode() on " + type.getName(), e);
            }
        }
    };

    /** Per routing class: whether it overrides {@link Routing#routeKey}. */
    private static final ClassValue<Boolean> ROUTES_KEYS = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            try {
                return type.getMethod("routeKey", long.class, int.class).getDeclaringClass() != Routing.class;
            } catch (NoSuchMethodException e) {
                throw new IllegalStateException("no routeKey(long, int) on " + type.getName(), e);
            }
        }
    };

    private RowKeys() {
    }

    /**
     * @param routing a routing
     * @return whether it routes keys ({@link Routing#routeKey} overridden), as fixed-width exchanges need: a lambda
     *         defines only {@link Routing#route}, which they never call
     */
    static boolean routesKeys(Routing<?> routing) {
        return ROUTES_KEYS.get(routing.getClass());
    }

    /**
     * @param row an object row
     * @return its key, equal for equal rows in every process
     * @throws IllegalArgumentException if the row's class does not override {@code hashCode()} (nor is one of the
     *                                  kinds above), or is an array of objects
     */
    static long keyOf(Object row) {
        if (row instanceof Long) {
            return (Long) row;
        }
        if (row instanceof Integer || row instanceof Short || row instanceof Byte) {
            return ((Number) row).intValue();
        }
        Class<?> type = row.getClass();
        if (type.isArray()) {
            return arrayKey(row);
        }
        if (row instanceof Enum) {
            return ((Enum<?>) row).ordinal();
        }
        if (IDENTITY_HASH.get(type)) {
            throw new IllegalArgumentException("Routing.byKey() cannot route a row of " + type.getName()
                + ": it does not override hashCode(), so equal rows have different identity hashes (in every process)"
                + "; override hashCode() and equals(), or route with Routing.hash(key)");
        }
        return row.hashCode();
    }

    private static long arrayKey(Object row) {
        if (row instanceof byte[]) {
            return Arrays.hashCode((byte[]) row);
        }
        if (row instanceof long[]) {
            return Arrays.hashCode((long[]) row);
        }
        if (row instanceof int[]) {
            return Arrays.hashCode((int[]) row);
        }
        if (row instanceof short[]) {
            return Arrays.hashCode((short[]) row);
        }
        if (row instanceof char[]) {
            return Arrays.hashCode((char[]) row);
        }
        if (row instanceof double[]) {
            return Arrays.hashCode((double[]) row);
        }
        if (row instanceof float[]) {
            return Arrays.hashCode((float[]) row);
        }
        if (row instanceof boolean[]) {
            return Arrays.hashCode((boolean[]) row);
        }
        throw new IllegalArgumentException("Routing.byKey() cannot route a row of " + row.getClass().getTypeName()
            + ": an array of objects (its elements' hash codes may be identity hashes); route with Routing.hash(key)");
    }
}
