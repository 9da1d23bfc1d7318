import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPhoneCountry, matchEmail, matchPhone } from '../../src/shared/match-keys.js';

describe('matching keys (SPEC §21)', () => {
  it('matches e-mails as one mailbox: case, spaces, +tags, and Gmail’s dots and two domains', () => {
    const table: [string | null, string | null][] = [
      ['ana@x.com', 'ana@x.com'],
      ['  Ana@X.com ', 'ana@x.com'],
      ['ana+crm@x.com', 'ana@x.com'],
      ['ana+a+b@x.com', 'ana@x.com'],
      ['a.na@x.com', 'a.na@x.com'],
      ['A.Na.Souza+news@Gmail.com', 'anasouza@gmail.com'],
      ['ana.souza@googlemail.com', 'anasouza@gmail.com'],
      ['+ana@x.com', '+ana@x.com'],
      ['', null],
      [null, null],
    ];
    for (const [email, key] of table) assert.equal(matchEmail(email), key, String(email));
  });

  it('matches phones in E.164, read in the tenant’s country when they carry no +code', () => {
    const table: [string, string, string | null][] = [
      ['(11) 98765-4321', 'BR', '+5511987654321'],
      ['+55 11 98765-4321', 'BR', '+5511987654321'],
      ['11987654321', 'BR', '+5511987654321'],
      ['+5511987654321', 'US', '+5511987654321'],
      ['(11) 3456-7890', 'BR', '+551134567890'],
      ['(415) 555-2671', 'US', '+14155552671'],
      ['+1 415 555 2671', 'BR', '+14155552671'],
      ['912 345 678', 'PT', '+351912345678'],
      ['020 7946 0958', 'GB', '+442079460958'],
      ['030 901820', 'DE', '+4930901820'],
    ];
    for (const [phone, country, key] of table) assert.equal(matchPhone(phone, country), key, `${phone} in ${country}`);
  });

  it('keeps no key for a phone that is no number: it is kept as written and matches none', () => {
    for (const phone of ['12345', 'call me', '0000000000', '+55 11', '', '(11) 98765-432']) {
      assert.equal(matchPhone(phone, 'BR'), null, phone);
    }
    assert.equal(matchPhone(null, 'BR'), null);
  });

  it('knows the countries whose phones it can read', () => {
    for (const country of ['BR', 'US', 'PT', 'GB', 'DE', 'AR']) assert.ok(isPhoneCountry(country), country);
    for (const country of ['XX', 'br', 'BRA', '', 'ZZ']) assert.ok(!isPhoneCountry(country), country);
  });
});
