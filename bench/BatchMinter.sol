// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IMintable {
    function mint(address to, uint256 amount) external;
}

/// bench:chains only: many token Transfer events in one transaction, as a busy token's block has,
/// by calling the test token's open mint once per recipient (the logs are the token's own).
contract BatchMinter {
    function mintEach(address token, address[] calldata recipients, uint256 amount) external {
        for (uint256 i = 0; i < recipients.length; i++) {
            IMintable(token).mint(recipients[i], amount);
        }
    }
}
