/** The stages of every tenant's first pipeline when FUNIL_LEAD_STATUSES is not set (SPEC §3, §20). */
export const SEVEN = ['new', 'contacted', 'qualified', 'proposal', 'negotiation', 'won', 'lost'];

/** A second pipeline's stages, the README's example: labels other than the keys, one of each kind. */
export const CLINIC = [
  { key: 'scheduled', label: 'Agendado', kind: 'open' },
  { key: 'attended', label: 'Compareceu', kind: 'open' },
  { key: 'enrolled', label: 'Matrícula', kind: 'won' },
  { key: 'gave_up', label: 'Desistiu', kind: 'lost' },
];
