const KEY = 'funil.merges';
/** The merges this tab remembers, newest first: enough to undo the latest few. */
const MOST = 20;

/**
 * The merges made in this tab's session, kept in sessionStorage as the token is (SPEC §18) and
 * forgotten with it at sign-out: `{id, resource, targetId, sourceIds, names: {id: name}, createdAt,
 * state: 'merged' | 'undone' | 'expired'}`.
 */
export const recentMerges = {
  list() {
    try {
      const kept = JSON.parse(sessionStorage.getItem(KEY) ?? '[]');
      return Array.isArray(kept) ? kept : [];
    } catch {
      return [];
    }
  },
  add(merge) {
    return save([merge, ...this.list().filter((known) => known.id !== merge.id)]);
  },
  mark(id, state) {
    return save(this.list().map((known) => (known.id === id ? { ...known, state } : known)));
  },
  clear() {
    sessionStorage.removeItem(KEY);
  },
};

function save(merges) {
  const kept = merges.slice(0, MOST);
  sessionStorage.setItem(KEY, JSON.stringify(kept));
  return kept;
}
