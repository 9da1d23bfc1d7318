let sequence = 0;

/** A value no other call in this process returns: tests that share a tenant never collide on a unique field. */
export function unique(prefix: string): string {
  sequence += 1;
  return `${prefix}-${process.pid}-${sequence}`;
}

/** A fresh e-mail address (customers' e-mails are unique per tenant, SPEC §4). */
export function uniqueEmail(label = 'email'): string {
  return `${unique(label)}@example.com`;
}
