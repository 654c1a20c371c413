"""Diagnosers: the cause behind a policy's symptoms, one diagnoser per module.

Heron's three (under-provisioning, slow instance, data skew) each need exactly one
component in backpressure: with two or more, which one is the cause is ambiguous
(Heron throws; these return no diagnosis, and the symptoms are still recorded)."""
