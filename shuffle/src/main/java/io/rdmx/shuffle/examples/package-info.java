/** Example SPMD plans on the shuffle service. */
package io.rdmx.shuffle.examples;
